"""A real HTTP file server on 127.0.0.1 for the model manager's tests: Range requests, and the
ways real servers fail (a cut connection, an error status, a slow or stalled transfer)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BLOCK = 64 * 1024


@dataclass
class Served:
    source: Path
    length: int | None = None  # serve only the first bytes of `source`
    status: int = 200  # anything else is answered as an error, without a body
    cut_after: int | None = None  # close the connection after this many body bytes, once
    delay_s: float = 0.0  # before each 64 KiB block: a slow server
    stall_after: int | None = None  # stop sending after this many bytes until `release` is set
    ignore_range: bool = False
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def size(self) -> int:
        return self.length if self.length is not None else self.source.stat().st_size


class ModelServer:
    def __init__(self) -> None:
        self.files: dict[str, Served] = {}
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    def url(self, name: str) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/{name}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass  # the tests read `requests`, not a log

            def do_GET(self) -> None:
                name = self.path.lstrip("/")
                requested = self.headers.get("Range")
                server.requests.append((name, requested))
                served = server.files.get(name)
                if served is None or served.status != 200:
                    self.send_error(404 if served is None else served.status)
                    return
                size, start = served.size, 0
                match = re.fullmatch(r"bytes=(\d+)-", requested or "")
                if match and not served.ignore_range:
                    start = int(match.group(1))
                    if start >= size:
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{size}")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(size - start))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                self._send_body(served, start, size)

            def _send_body(self, served: Served, start: int, size: int) -> None:
                sent = 0
                with served.source.open("rb") as handle:
                    handle.seek(start)
                    while start + sent < size:
                        if served.cut_after is not None and sent >= served.cut_after:
                            served.cut_after = None  # once: the resumed request gets the rest
                            self.close_connection = True
                            return
                        if served.stall_after is not None and sent >= served.stall_after:
                            served.release.wait()
                            return
                        if served.delay_s:
                            served.release.wait(served.delay_s)
                        limit = min(BLOCK, size - start - sent)
                        if served.cut_after is not None:
                            limit = min(limit, served.cut_after - sent)
                        block = handle.read(limit)
                        try:
                            self.wfile.write(block)
                        except (BrokenPipeError, ConnectionResetError):
                            return  # the client paused
                        sent += len(block)

        return Handler


@contextmanager
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    thread = threading.Thread(
        target=server._server.serve_forever, args=(0.05,), name="model-server"
    )
    thread.start()
    try:
        yield server
    finally:
        for served in server.files.values():
            served.release.set()  # let stalled handlers finish
        server._server.shutdown()
        server._server.server_close()
        thread.join()
