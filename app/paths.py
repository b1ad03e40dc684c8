"""Where Docent keeps its files: the platform's folders, overridable for tests and portable use.

They hold documents' text, questions and answers: only their user may read them (folders 0700,
files 0600), whatever the umask.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "Docent"


@dataclass(frozen=True, slots=True)
class Paths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path
    models_dir: Path

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Paths:
        """Platform folders, each overridable by a DOCENT_*_DIR variable (tests use tmp)."""
        home = environ.get("DOCENT_HOME")

        def pick(variable: str, sub: str, platform_default: str) -> Path:
            if value := environ.get(variable):
                return Path(value).expanduser()
            if home:
                return Path(home).expanduser() / sub
            return Path(platform_default)

        data_dir = pick("DOCENT_DATA_DIR", "data", platformdirs.user_data_dir(APP_NAME, False))
        return cls(
            config_dir=pick(
                "DOCENT_CONFIG_DIR", "config", platformdirs.user_config_dir(APP_NAME, False)
            ),
            data_dir=data_dir,
            cache_dir=pick(
                "DOCENT_CACHE_DIR", "cache", platformdirs.user_cache_dir(APP_NAME, False)
            ),
            models_dir=pick("DOCENT_MODELS_DIR", "models", str(data_dir / "models")),
        )

    @property
    def database(self) -> Path:
        return self.data_dir / "library.sqlite3"

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def onnx_models(self) -> Path:
        """The ONNX models Docent builds from bundled weights: shared like the models."""
        return self.models_dir / "onnx"

    @property
    def fast_embedder_failed(self) -> Path:
        """Why the fast embedding engine could not run on this machine, once it failed."""
        return self.data_dir / "fast-embedder-failed.json"

    @property
    def engine_safety(self) -> Path:
        """The safe settings a crash chose for each local model on this machine."""
        return self.data_dir / "engine-safety.json"

    def create(self) -> None:
        """Docent's folders, private; those an older version made readable to others are
        tightened (which protects the files in them, too). An existing models folder is left as
        it is: models may be shared, and are no secret."""
        for folder in (self.config_dir, self.data_dir, self.cache_dir):
            private_folder(folder)
            _tighten(folder, 0o700)
        private_folder(self.models_dir)


def private_folder(folder: Path) -> Path:
    """`folder`, created with any missing parents, readable by this user only (0700)."""
    for missing in reversed([f for f in (folder, *folder.parents) if not f.exists()]):
        missing.mkdir(mode=0o700, exist_ok=True)
    return folder


def private_file(path: Path) -> Path:
    """`path`, created empty and readable by this user only (0600) unless it exists."""
    os.close(os.open(private_folder(path.parent) / path.name, os.O_RDONLY | os.O_CREAT, 0o600))
    return path


def write_private(path: Path, text: str) -> None:
    """Write `text` atomically (a crash never leaves a truncated file), readable by this user
    only: mkstemp creates the file 0600, and the replace gives `path` that file's mode."""
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=private_folder(path.parent), delete=False, suffix=".tmp"
    ) as handle:
        handle.write(text)
        temporary = Path(handle.name)
    os.replace(temporary, path)


def _tighten(path: Path, mode: int) -> None:
    with contextlib.suppress(PermissionError):  # someone else's folder: theirs to set
        path.chmod(mode)
