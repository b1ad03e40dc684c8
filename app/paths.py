"""Where Docent keeps its files: the platform's folders, overridable for tests and portable use."""

from __future__ import annotations

import os
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

    def create(self) -> None:
        for folder in (self.config_dir, self.data_dir, self.cache_dir, self.models_dir):
            folder.mkdir(parents=True, exist_ok=True)
