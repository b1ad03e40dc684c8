"""A verified file's stamp: a file hashed once (a model joined, downloaded or built) is stamped
beside it, so later starts cost a stat, not a hash. The stamp names the file's path, size and
modification time; any change means hashing it again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol


class Verifiable(Protocol):
    """A file known by its name and sha256: a catalog model, a download, a model Docent built."""

    @property
    def file(self) -> str: ...

    @property
    def sha256(self) -> str: ...


def stamp_matches(stamp: Path, target: Path, model: Verifiable) -> bool:
    """`target` is the file `stamp` says was verified: same path, size and time."""
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return bool(
        recorded.get("sha256") == model.sha256
        and recorded.get("path") == str(target)
        and recorded.get("size") == stat.st_size
        and recorded.get("mtime_ns") == stat.st_mtime_ns
    )


def stamp_path(model: Verifiable, folder: Path) -> Path:
    return folder / f"{model.file}.verified"


def write_stamp(stamp: Path, target: Path, model: Verifiable) -> None:
    stat = target.stat()
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(
        json.dumps(
            {
                "sha256": model.sha256,
                "path": str(target),
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
            }
        ),
        encoding="utf-8",
    )
