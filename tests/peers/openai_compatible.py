"""Stand-ins for a cloud provider on 127.0.0.1: llama.cpp's real OpenAI-compatible server on a
bundled GGUF, and a tiny server that misbehaves in every way the gateway must explain."""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from app.processes import free_loopback_port, serving

LLAMA_SERVER = Path(__file__).with_name("llama_server.py")


@contextmanager
def llama_cpp_server(
    model: Path, log: Path, alias: str = "qwen-mini", script: Path = LLAMA_SERVER
) -> Iterator[str]:
    """`python -m llama_cpp.server` on 127.0.0.1 (ggml's backends loaded as Docent loads them:
    tests/peers/llama_server.py, or another runner `script`); yields its base URL (…/v1)."""
    port = free_loopback_port()
    command = [
        sys.executable, str(script), "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--model_alias", alias,
        # By default a new request cuts off the one streaming (as some hosted APIs do under
        # load); the tests want requests queued, as a provider that serves them all would.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    with serving(command, "Uvicorn running on", log, timeout_s=120):
        yield f"http://127.0.0.1:{port}/v1"


def _chunk(content: str | None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content else {}
    body = {"model": "flaky-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class Misbehaving(BaseHTTPRequestHandler):
    """The first path segment picks the behaviour: /ok, /unauthorized, /missing, /limited-once,
    /limited, /broken, /stalled, /cut, /silent-usage."""

    calls: ClassVar[dict[str, int]] = {}
    release = threading.Event()

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def _refusal(self, scenario: str) -> tuple[int, object, dict[str, str]] | None:
        if scenario == "limited" or (scenario == "limited-once" and self.calls[scenario] == 1):
            return 429, {"error": "slow down"}, {"Retry-After": "0"}
        return {
            "unauthorized": (401, {"error": {"message": "Incorrect API key provided"}}, {}),
            "missing": (404, {"error": {"message": "model not found"}}, {}),
            "broken": (503, {"error": "upstream overloaded"}, {}),
        }.get(scenario)

    def do_GET(self) -> None:  # /models
        scenario = self.path.strip("/").split("/")[0]
        Misbehaving.calls[scenario] = Misbehaving.calls.get(scenario, 0) + 1
        refusal = self._refusal(scenario)
        self._reply(*(refusal or (200, {"data": [{"id": "flaky-1"}]}, {})))

    def do_POST(self) -> None:
        scenario = self.path.strip("/").split("/")[0]
        Misbehaving.calls[scenario] = Misbehaving.calls.get(scenario, 0) + 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if refusal := self._refusal(scenario):
            self._reply(*refusal)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        if scenario == "stalled":
            Misbehaving.release.wait(30)  # holds the answer until the test has seen the timeout
            return
        self.wfile.write(_chunk("Seven"))
        self.wfile.write(_chunk(" years"))
        self.wfile.flush()
        if scenario == "cut":
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(_chunk(".", "stop"))
        if scenario != "silent-usage":
            usage = {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45}
            self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _reply(self, status: int, body: object, headers: dict[str, str]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@contextmanager
def misbehaving_server() -> Iterator[str]:
    """Yields the server's root URL; a provider's base URL is root + '/<scenario>/v1'."""
    Misbehaving.calls = {}
    Misbehaving.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
    thread = threading.Thread(target=server.serve_forever, name="misbehaving-provider")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        Misbehaving.release.set()
        server.shutdown()
        server.server_close()
        thread.join()
