"""llama.cpp's native libraries, loaded for this processor: imported only where a model runs (the
engine's child process, llama.cpp's own server in the tests, the benches), never in the window's.

Docent's build of llama-cpp-python (see the Makefile) carries llama.cpp's CPU code once per x86
level (x64, SSE4.2, AVX, AVX2, AVX-512, …) as separate libraries, and ggml picks the best one this
processor runs at load time (`GGML_BACKEND_DL`, `GGML_CPU_ALL_VARIANTS`), so one build runs on
every CPU. ggml looks for them beside the program (here: the Python interpreter) unless told
where: `load()` tells it. A build with the CPU code linked in (a plain `pip install`) has its
backends already, and `load()` adds nothing.
"""

from __future__ import annotations

import ctypes
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True, slots=True)
class Backend:
    """What runs the model on this machine, as `docent models` and the smoke test show it."""

    variant: str  # the CPU library ggml chose ("icelake", "haswell"), or "built in"
    features: tuple[str, ...]  # the instruction sets that library uses ("AVX2", "AVX512", …)
    gpu: bool  # a GPU backend (Metal, CUDA, Vulkan) is there

    @property
    def has_amx(self) -> bool:
        """llama.cpp's AMX weight repacking is in this build: it crashes on the Q4_K family
        (ggml-org/llama.cpp#20824), so models load with extra buffer types off here."""
        return "AMX_INT8" in self.features

    def describe(self) -> str:
        shown = [f for f in self.features if f not in _BUILD_OPTIONS] or ["no SIMD extensions"]
        where = "CPU" + (" and GPU" if self.gpu else "")
        return f"{where}, {self.variant} code ({' '.join(shown)})"


# What llama.cpp lists beside the instruction sets: how it was built, the same everywhere.
_BUILD_OPTIONS = {"LLAMAFILE", "OPENMP", "REPACK"}
_VARIANT = re.compile(r"ggml-cpu-([\w.]+)\.(so|dll|dylib)")


def load() -> ModuleType:
    """`llama_cpp`, with ggml's backends loaded from its own library folder."""
    import llama_cpp
    from llama_cpp._logger import set_verbose

    set_verbose(False)  # llama.cpp's errors only, not a line per library it loads
    library_dir = Path(str(llama_cpp.__file__)).parent / "lib"
    ggml = _ggml_of(llama_cpp)
    ggml.ggml_backend_reg_count.restype = ctypes.c_size_t
    if ggml.ggml_backend_reg_count() == 0:
        ggml.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
        ggml.ggml_backend_load_all_from_path(str(library_dir).encode())
    return llama_cpp


def _ggml_of(llama_cpp: ModuleType) -> ctypes.CDLL:
    """The ggml library libllama itself uses. A wheel holds each library several times (its
    symlinks become copies: libggml.so, libggml.so.0), and a copy opened by its path would be a
    second ggml, whose backends libllama never sees. Looked up through libllama's handle, a
    symbol comes from libllama's own dependencies (dlsym); Windows has one ggml.dll."""
    libllama = llama_cpp.llama_cpp._lib
    if hasattr(libllama, "ggml_backend_reg_count"):
        return libllama  # type: ignore[no-any-return]
    from llama_cpp._ctypes_extensions import load_shared_library

    library_dir = Path(str(llama_cpp.__file__)).parent / "lib"
    return load_shared_library("ggml", library_dir)  # type: ignore[no-any-return]


def backend(llama_cpp: ModuleType) -> Backend:
    """The backend `load()` found (the CPU library ggml chose, and its instruction sets)."""
    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    features = tuple(re.findall(r"(\w+) = 1", info))
    return Backend(_loaded_variant(), features, bool(llama_cpp.llama_supports_gpu_offload()))


def use_extra_buffers(llama_cpp: ModuleType, enabled: bool) -> None:
    """Load models from now on with llama.cpp's extra buffer types (weight repacking: AMX, and
    the CPU's interleaved layouts) on or off. llama-cpp-python has no argument for it; it takes
    its model parameters from this function."""
    bindings = llama_cpp.llama_cpp
    default_params = getattr(bindings, "_docent_default_params", None)
    if default_params is None:
        default_params = bindings._docent_default_params = bindings.llama_model_default_params

    def model_params() -> object:
        params = default_params()
        params.use_extra_bufts = enabled
        return params

    bindings.llama_model_default_params = model_params


def _loaded_variant() -> str:
    """Which CPU library this process mapped (Linux tells through /proc; elsewhere the
    packages carry one CPU library, built for the platform)."""
    if not sys.platform.startswith("linux"):
        return "built in"
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "unknown"
    found = _VARIANT.search(maps)
    return found.group(1) if found else "built in"
