"""The document reader: PyMuPDF in a supervised child process, so no file can hang, crash or
exhaust the app.

MuPDF can loop for hours on a zip-bomb EPUB, lay out unbroken text in quadratic time, overflow
its stack on a deeply nested outline, and it is not thread-safe. So the app never imports it:
a child process (`app.documents.worker`) reads one document at a time, and this side holds it to
a wall-clock and a memory limit. A document that breaks a limit, crashes the child or raises
anything fails with its reason, and the next request starts a fresh child.
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from app.documents.chunking import Chunk
from app.documents.ocr import WordBox
from app.documents.parse import DocumentError
from app.documents.render import RenderedPage
from app.processes import EXITED, ChildProcess, how_it_ended
from app.settings import LibrarySettings
from app.workers import Emitter, SerialWorker, StreamClosed

POLL_S = 0.05  # how often a running request's clock and memory are checked
START_TIMEOUT_S = 60.0  # importing PyMuPDF in a fresh child, on a busy machine
PREVIEW_TIMEOUT_S = 30.0
OCR_MEMORY_BYTES = 1536 << 20
CLOSED = "the document reader has closed (Docent is closing)"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ReadLimits:
    timeout_s: float
    memory_bytes: int
    max_unpacked_bytes: int

    @classmethod
    def from_settings(cls, library: LibrarySettings) -> ReadLimits:
        return cls(
            library.parse_timeout_s, library.parse_memory_mb << 20, library.max_unpacked_mb << 20
        )

    @classmethod
    def for_ocr(cls, library: LibrarySettings) -> ReadLimits:
        """OCR's models need more memory than reading text: an A4 page peaked at 850 MiB."""
        limits = cls.from_settings(library)
        return replace(limits, memory_bytes=max(limits.memory_bytes, OCR_MEMORY_BYTES))


@dataclass(frozen=True, slots=True)
class Opened:
    title: str
    format: str
    pages: int


@dataclass(frozen=True, slots=True)
class ChunksRead:
    done: int  # pages read so far
    total: int
    chunks: list[Chunk]


@dataclass(frozen=True, slots=True)
class Parsed:
    note: str | None
    ocr_pages: tuple[int, ...]  # pages without a usable text layer, left to OCR


@dataclass(frozen=True, slots=True)
class PageOcred:
    chunks: list[Chunk]
    words: list[WordBox]


ReadEvent = Opened | ChunksRead | Parsed


class DocumentReader:
    """Reads documents in a child process, one request at a time (its own thread drives it)."""

    def __init__(
        self, limits: ReadLimits, name: str = "reader", *, background: bool = True
    ) -> None:
        """`background`: the process runs at a lower priority (indexing; not a preview)."""
        self.limits = limits  # read at each request: settings apply from the next document
        self._background = background
        self._thread = SerialWorker(name)
        self._child: ChildProcess | None = None  # only touched on self._thread
        # Set on the loop at close(): a request queued behind the closing stop must not start
        # a child nobody stops (a thumbnail asked for while the window closes).
        self._closed = False

    async def start(self) -> None:
        """Start the child now rather than at the first request (it imports PyMuPDF)."""
        await self._run(self._ready_child)

    def parse(self, path: Path, within: Path | None = None) -> AsyncGenerator[ReadEvent, None]:
        """The document's chunks as they are read; DocumentError (with the reason) if it cannot
        be. `within`: the real folder the file must lie in when the child opens it (links.py).
        Closing the stream early stops the child (the next request starts another)."""
        return self._thread.stream(lambda emit: self._parse(path, within, emit))

    async def render(
        self,
        path: Path,
        page: int,
        zoom: float = 1.5,
        passage: str = "",
        words: Sequence[WordBox] = (),
        indexed: tuple[int, int] | None = None,
        used: Sequence[str] = (),
    ) -> RenderedPage:
        """The page as a picture, the passage marked, and the `used` sentences of it apart
        (`words`: the page's, if OCR read it).
        `indexed`: the file's size and time when it was indexed; a file changed since (or
        swapped for a link to another) is refused when the child opens it, not shown."""
        request = {"op": "render", "path": str(path), "page": page, "indexed": indexed}
        message = await self._run(
            self._request,
            request | {"zoom": zoom, "passage": passage, "words": list(words), "used": list(used)},
        )
        return RenderedPage(
            png=base64.b64decode(message["png"]),
            page=message["page"],
            pages=message["pages"],
            label=message["label"],
            highlights=tuple(tuple(rect) for rect in message["highlights"]),
            used=tuple(tuple(rect) for rect in message["used"]),
        )

    async def ocr(self, path: Path, page: int, indexed: tuple[int, int]) -> PageOcred:
        """OCR one page (1-based) of the file as it was `indexed` (its size and time, as for
        `render`) within the reader's limits; cancelling it stops the child at once rather than
        after the page (seconds)."""
        request = {"op": "ocr", "path": str(path), "page": page, "indexed": indexed}

        def read(emit: Emitter[PageOcred]) -> None:
            def handle(message: dict[str, Any]) -> bool:
                chunks = [Chunk(*row) for row in message["chunks"]]
                emit(PageOcred(chunks, [tuple(word) for word in message["words"]]))
                return True

            self._exchange(request, handle, lambda: emit.closed)

        async with contextlib.aclosing(self._thread.stream(read)) as results:
            async for result in results:
                return result
        raise DocumentError("the OCR reader answered nothing")

    @property
    def running(self) -> bool:
        """Whether a child process is up (a glance from any thread: it may change at once)."""
        return self._child is not None

    async def stop(self) -> None:
        """End the child now, to free its memory; the next request starts another."""
        await self._thread.run(self._stop)

    async def close(self) -> None:
        self._closed = True
        await self._thread.run(self._stop)
        self._thread.shutdown()

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise DocumentError(CLOSED)
        return await self._thread.run(function, *args)

    # --- on the reader's thread --------------------------------------------------------------

    def _parse(self, path: Path, within: Path | None, emit: Emitter[ReadEvent]) -> None:
        request = {
            "op": "parse",
            "path": str(path),
            "within": None if within is None else str(within),
            "max_unpacked": self.limits.max_unpacked_bytes,
        }

        def handle(message: dict[str, Any]) -> bool:
            match message["event"]:
                case "opened":
                    emit(Opened(message["title"], message["format"], message["pages"]))
                case "chunks":
                    chunks = [Chunk(*row) for row in message["chunks"]]
                    emit(ChunksRead(message["done"], message["total"], chunks))
                case "parsed":
                    emit(Parsed(message["note"], tuple(message["ocr_pages"])))
                    return True
            return False

        self._exchange(request, handle, lambda: emit.closed)

    def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        answers: list[dict[str, Any]] = []

        def handle(message: dict[str, Any]) -> bool:
            answers.append(message)
            return True

        self._exchange(request, handle, lambda: False, timeout_s=PREVIEW_TIMEOUT_S)
        return answers[0]

    def _exchange(
        self,
        request: dict[str, Any],
        handle: Callable[[dict[str, Any]], bool],
        cancelled: Callable[[], bool],
        timeout_s: float | None = None,
    ) -> None:
        """Send one request and pass its messages to `handle` until it returns True, within the
        limits; any way out other than that leaves no child behind."""
        child = self._ready_child()
        limits = self.limits
        timeout_s = timeout_s or limits.timeout_s
        deadline = time.monotonic() + timeout_s
        label = "document"
        finished = False
        try:
            child.send(request)  # if it died, its exit is reported below as a crash
            while True:
                message = child.next_message(POLL_S)
                if cancelled():
                    raise StreamClosed
                if message is EXITED:
                    code = child.stop(kill=True)
                    self._child = None
                    raise DocumentError(_crashed(label, code))
                if time.monotonic() > deadline:
                    raise DocumentError(f"took longer than {timeout_s:g} s to read")
                if child.memory() > limits.memory_bytes:
                    raise DocumentError(
                        f"needed more than {limits.memory_bytes >> 20} MB of memory to read"
                    )
                if message is None:
                    continue
                if message["event"] == "reading":
                    label = message["label"]
                elif message["event"] == "failed":
                    finished = True  # the child is fine: it reported the document's failure
                    raise DocumentError(message["reason"])
                elif handle(message):
                    finished = True
                    return
        finally:
            if not finished and self._child is not None:
                self._child.stop(kill=True)
                self._child = None

    def _ready_child(self) -> ChildProcess:
        if self._closed:
            raise DocumentError(CLOSED)
        if self._child is not None and self._child.process.poll() is None:
            return self._child
        if self._child is not None:
            self._child.stop(kill=True)
        child = ChildProcess(
            "app.documents.worker", *(["--background"] if self._background else [])
        )
        message = child.next_message(START_TIMEOUT_S)
        if message is None or message["event"] != "ready":
            child.stop(kill=True)
            raise DocumentError("the document reader could not start (a damaged installation?)")
        self._child = child
        return child

    def _stop(self) -> None:
        if self._child is not None:
            self._child.stop(kill=False)
            self._child = None


def _crashed(label: str, code: int | None) -> str:
    if code is not None and code < 0:  # killed by a signal: a segfault, an abort
        return f"crashed the {label} reader"
    return f"crashed the {label} reader ({how_it_ended(code)})"
