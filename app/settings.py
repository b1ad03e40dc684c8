"""Typed, described, versioned settings, stored as JSON in the config folder.

Secrets never live here: cloud keys go to the OS keychain (see the desktop and cloud issues).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.errors import DocentError

SETTINGS_VERSION = 1


class SettingsError(DocentError):
    """The settings file cannot be read or holds an invalid value."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LocalModelSettings(_Section):
    chat_model: str = Field(
        "qwen2.5-coder-0.5b",
        description="A model name from the catalog, or the path of any GGUF file.",
    )
    n_threads: int | None = Field(
        None, ge=1, le=512, description="CPU threads for inference; empty = the CPU's cores."
    )
    n_ctx: int = Field(4096, ge=512, le=262144, description="Context window in tokens.")
    n_gpu_layers: int = Field(
        0, ge=-1, description="Layers offloaded to Metal/CUDA builds; -1 = all, 0 = CPU only."
    )
    max_tokens: int = Field(384, ge=16, le=8192, description="Longest answer, in tokens.")
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature; 0 answers greedily from sources."
    )


class RetrievalSettings(_Section):
    top_k: int = Field(4, ge=1, le=20, description="Passages given to the model per question.")
    context_tokens: int = Field(
        1200,
        ge=128,
        le=32768,
        description="Budget of source text per prompt; on CPU, prompt length dominates TTFT.",
    )


class Settings(_Section):
    version: int = SETTINGS_VERSION
    local: LocalModelSettings = Field(default_factory=LocalModelSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    embedding_model: str = Field(
        "multilingual-e5-small", description="Embedding model name from the catalog."
    )

    @classmethod
    def load(cls, path: Path) -> Settings:
        if not path.exists():
            return cls()
        try:
            raw: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SettingsError(f"cannot read settings file {path}: {error}") from error
        if not isinstance(raw, dict):
            raise SettingsError(f"settings file {path} must hold a JSON object")
        if raw.get("version", SETTINGS_VERSION) > SETTINGS_VERSION:
            raise SettingsError(
                f"settings file {path} was written by a newer Docent (version {raw['version']})"
            )
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in issue['loc'])}: {issue['msg']}"
                for issue in error.errors()
            )
            raise SettingsError(f"invalid settings in {path}: {problems}") from None

    def save(self, path: Path) -> None:
        """Write atomically, so a crash never leaves a truncated settings file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp"
        ) as handle:
            handle.write(self.model_dump_json(indent=2))
            temporary = Path(handle.name)
        os.replace(temporary, path)
