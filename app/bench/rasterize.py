"""`docent eval --scanned DPI`: an evaluation set's PDFs as scans, so that the same questions
measure what OCR costs. Each page is rendered at DPI into a picture and the pictures are written
into a new PDF with no text layer; Docent's OCR pass reads it as it reads any scan.

PyMuPDF runs only in child processes (as app.documents does): each copy is made by this module
run as `python -I -m app.bench.rasterize IN OUT DPI`, under a time limit.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from app.errors import DocentError
from app.paths import private_folder
from app.processes import child_folder, own_module

# A 50-page manual takes about 6 s at 150 dpi on a busy core: this only stops a hung MuPDF.
RASTERIZE_TIMEOUT_S = 600.0


class RasterizeError(DocentError):
    """A document could not be turned into a scan."""


def scanned_folder(set_folder: Path, dpi: int) -> Path:
    """Where the scans of a set's documents at `dpi` are kept, beside the documents fetched."""
    return set_folder / f"scanned-{dpi}"


async def scanned_copies(
    documents: Sequence[Path],
    folder: Path,
    dpi: int,
    report: Callable[[str], None] | None = None,
) -> list[Path]:
    """An image-only copy of each of `documents` (PDFs), under its own name in `folder`; a copy
    newer than its document is kept from an earlier run."""
    say = report or (lambda _line: None)
    copies = []
    for document in documents:
        target = folder / document.name
        if await asyncio.to_thread(_current, target, document):
            say(f"{document.name}: scanned at {dpi} dpi (cached)")
        else:
            say(f"{document.name}: scanning at {dpi} dpi")
            await asyncio.to_thread(_rasterize_in_child, document, target, dpi)
        copies.append(target)
    return copies


def _current(copy: Path, document: Path) -> bool:
    # The set rewrites a document only when its pinned sha256 changed: the copy is then older.
    return copy.is_file() and copy.stat().st_mtime_ns >= document.stat().st_mtime_ns


def _rasterize_in_child(document: Path, target: Path, dpi: int) -> None:
    # Written beside, then renamed (same folder: atomic): a copy is whole or absent.
    partial = private_folder(target.parent) / f".{target.name}.part"
    command = own_module("app.bench.rasterize", str(document), str(partial), str(dpi))
    try:
        done = subprocess.run(
            command,
            cwd=child_folder(),
            capture_output=True,
            text=True,
            timeout=RASTERIZE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RasterizeError(
            f"{document.name}: not scanned within {RASTERIZE_TIMEOUT_S:g} s"
        ) from None
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise RasterizeError(f"{document.name}: cannot be scanned: {why[0]}")
    os.replace(partial, target)


def rasterize(document: Path, target: Path, dpi: int) -> None:
    """Write `target`: each page of `document` as one picture at `dpi`, page sizes kept, no text.
    Runs in the child."""
    from app.documents.parse import mupdf  # here: the app's process imports this module too

    fitz = mupdf()
    with fitz.open(document) as original, fitz.open() as copy:
        for page in original:
            scan = copy.new_page(width=page.rect.width, height=page.rect.height)
            scan.insert_image(scan.rect, pixmap=page.get_pixmap(dpi=dpi))
        copy.save(target, garbage=3, deflate=True)


if __name__ == "__main__":
    source, destination, resolution = sys.argv[1:]
    rasterize(Path(source), Path(destination), int(resolution))
