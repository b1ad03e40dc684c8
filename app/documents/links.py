"""Where a path really leads, and whether that is still inside the folder the user chose: the
walk checks it, and so do the intake and the reader at the moment they open a file (a file can
be swapped for a link between the walk and the read). What is read later (a scan's OCR pass) must
still be the file that was indexed."""

from __future__ import annotations

import os
from pathlib import Path

from app.documents.parse import DocumentError

LEADS_OUTSIDE = (
    "it has become a link to something outside the chosen folder: only what is inside the "
    "chosen folder is indexed"
)


def real_inside(path: Path, real_root: Path) -> Path | None:
    """`path`'s real place if it lies inside `real_root` (itself resolved), else None."""
    real = Path(os.path.realpath(path))
    return real if real.is_relative_to(real_root) else None


def still_as_indexed(path: Path, size: int, mtime_ns: int) -> None:
    """DocumentError unless the file at `path` is still the one indexed (its size and time): a
    file changed since, or swapped for a link to another file, is read again by the next index
    run under the folder's rules, never by the OCR pass in its place."""
    try:
        stat = path.stat()
    except OSError as error:
        raise DocumentError(f"cannot be read: {error.strerror or error}") from None
    if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns):
        raise DocumentError("the file changed since it was indexed: index it again")
