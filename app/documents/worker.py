"""The document reader's child process: PyMuPDF runs here, never in the app's process.

`python -I -m app.documents.worker` reads one JSON request per line on stdin and answers each with
JSON lines on stdout, which is reserved for them (anything MuPDF prints goes to stderr). The parent,
`app.documents.reader`, enforces the time and memory limits and starts a new child after a crash;
here a document only has to fail with a reason a user understands.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.documents.chunking import chunk_pages
from app.documents.formats import Format, UnsupportedFormat, detect
from app.documents.links import LEADS_OUTSIDE, real_inside, still_as_indexed
from app.documents.ocr import read_page
from app.documents.parse import DocumentError, PageText, mupdf, open_document
from app.documents.render import render_page
from app.processes import lower_this_process, open_channel

Send = Callable[[dict[str, Any]], None]

PROGRESS_INTERVAL = 0.05  # seconds between batches of chunks (and progress reports)
# The app holds a document's chunks until it writes them in one transaction: a bound on them.
MAX_CHARACTERS = 64 << 20


def main() -> int:
    if "--background" in sys.argv[1:]:  # indexing; a preview is what the user waits for
        lower_this_process()
    send = open_channel()
    mupdf()  # imported before the first request, so no document's clock counts it
    send({"event": "ready"})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "parse":
                path = Path(request["path"])
                if (within := request.get("within")) is not None:
                    # Checked here, at the open: the parent's check may be seconds old.
                    if (real := real_inside(path, Path(within))) is None:
                        raise DocumentError(LEADS_OUTSIDE)
                    path = real
                parse(path, request.get("max_unpacked"), send)
            elif request["op"] == "ocr":
                ocr(_as_indexed(request), request["page"], send)
            else:
                render(_as_indexed(request), request, send)
        except DocumentError as error:
            send({"event": "failed", "reason": str(error)})
        except Exception as error:  # the document's failure, never the reader's
            send({"event": "failed", "reason": reason_for(error)})
    return 0


def parse(path: Path, max_unpacked: int | None, send: Send) -> None:
    send({"event": "reading", "label": format_label(path)})
    with open_document(path, max_unpacked=max_unpacked) as document:
        total = document.page_count
        send(
            {
                "event": "opened",
                "title": document.title,
                "format": document.format.value,
                "pages": total,
            }
        )
        batch: list[tuple[int, int, str, str | None, str]] = []
        characters = 0
        sent = time.monotonic()
        for chunk in chunk_pages(document.pages()):
            batch.append((chunk.ordinal, chunk.page, chunk.page_label, chunk.heading, chunk.text))
            characters += len(chunk.text)
            if characters > MAX_CHARACTERS:
                raise DocumentError(
                    f"holds more text than Docent indexes from one document "
                    f"({MAX_CHARACTERS >> 20} million characters)"
                )
            if time.monotonic() - sent >= PROGRESS_INTERVAL:
                send({"event": "chunks", "done": chunk.page, "total": total, "chunks": batch})
                batch, sent = [], time.monotonic()
        send({"event": "chunks", "done": total, "total": total, "chunks": batch})
        send({"event": "parsed", "note": document.note, "ocr_pages": document.ocr_pages})


def ocr(path: Path, number: int, send: Send) -> None:
    """OCR page `number` (1-based): its chunks, and its words' boxes for highlighting."""
    send({"event": "reading", "label": "OCR"})
    with open_document(path) as document:
        page = document.load_page(number - 1)
        label = (page.get_label() if document.format is Format.PDF else "") or str(number)
        read = read_page(page)
    text = PageText(number, label, tuple((paragraph, None) for paragraph in read.paragraphs))
    send(
        {
            "event": "ocred",
            "chunks": [
                (c.ordinal, c.page, c.page_label, c.heading, c.text) for c in chunk_pages([text])
            ],
            "words": [(word.text, *word.box) for word in read.words],
        }
    )


def _as_indexed(request: dict[str, Any]) -> Path:
    """The request's file, checked at the open to be the one indexed (links.still_as_indexed)."""
    path = Path(request["path"])
    if (indexed := request.get("indexed")) is not None:
        still_as_indexed(path, *indexed)
    return path


def render(path: Path, request: dict[str, Any], send: Send) -> None:
    page = render_page(
        path,
        request["page"],
        request["zoom"],
        request["passage"],
        [tuple(word) for word in request["words"]],
        request.get("used", ()),
    )
    send(
        {
            "event": "rendered",
            "png": base64.b64encode(page.png).decode("ascii"),
            "page": page.page,
            "pages": page.pages,
            "label": page.label,
            "highlights": page.highlights,
            "used": page.used,
        }
    )


def format_label(path: Path) -> str:
    """What the file is, for a crash report ("crashed the PDF reader")."""
    try:
        with path.open("rb") as handle:
            return detect(path, handle.read(4096)).format.label
    except (OSError, UnsupportedFormat):
        return "document"


def reason_for(error: BaseException) -> str:
    """MuPDF's and Python's errors in words a user understands."""
    message = str(error)
    if "cycle in page tree" in message:
        return "the PDF's page tree loops"
    if isinstance(error, MemoryError):
        return "ran out of memory while reading it"
    if isinstance(error, RecursionError):
        return "its structure is nested too deeply to read"
    if isinstance(error, FileNotFoundError):
        return "the file disappeared while it was being indexed"
    if isinstance(error, PermissionError):
        return "permission denied: Docent may not read this file"
    if isinstance(error, RuntimeError | ValueError):  # MuPDF's own errors derive from these
        return f"damaged: {message or type(error).__name__}"
    return f"could not be read: {message or type(error).__name__}"


if __name__ == "__main__":
    sys.exit(main())
