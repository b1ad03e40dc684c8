"""llama.cpp's OpenAI-compatible server, `python -m llama_cpp.server`, as the tests' stand-in
cloud provider: run as a script (`python tests/peers/llama_server.py ARGS`), with ggml's CPU
backends loaded from llama-cpp-python's folder first (app/llm/native.py) and, on a processor whose
build has AMX repacking, extra buffer types off, as Docent's own engine does."""

import runpy

from app.llm import native

if __name__ == "__main__":
    llama_cpp = native.load()
    native.use_extra_buffers(llama_cpp, not native.backend(llama_cpp).has_amx)
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
