"""`docent serve-mcp` checks Host and Origin on every address it binds, not only on the exact
strings 127.0.0.1, localhost and ::1: a page that rebinds its own name to a loopback address
(DNS rebinding) must not reach the library through the user's browser."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest

from app.paths import Paths
from app.processes import free_loopback_port, serving
from tests.integration.test_mcp_server import READY, SERVE, token_shown

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("bind", "netlocs"),
    [
        ("127.0.0.1", ["127.0.0.1", "localhost"]),
        ("127.0.0.2", ["127.0.0.2"]),
        # Each spelling a client may use for the address it was told (or a browser writes).
        ("0:0:0:0:0:0:0:1", ["[0:0:0:0:0:0:0:1]", "[::1]"]),
        ("::ffff:127.0.0.1", ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]),
    ],
)
def test_forged_host_or_origin_is_refused_on_any_loopback_spelling(
    bind: str, netlocs: list[str], tmp_path: Path, isolated_paths: Paths
) -> None:
    port = free_loopback_port()
    command = [*SERVE, "--transport", "streamable-http", "--host", bind, "--port", str(port)]
    url = f"http://{netlocs[0]}:{port}/mcp"
    # No keychain here: the token goes to the key file the user allowed. Every request carries
    # it: what is refused here is refused for its Host or Origin.
    consent = {"secrets": {"plaintext_file_consent": True}}
    isolated_paths.settings_file.write_text(json.dumps(consent), "utf-8")
    log = tmp_path / "serve.log"
    with serving(command, READY, log, timeout_s=120), httpx.Client() as http:
        http.headers["Authorization"] = f"Bearer {token_shown(log)}"
        rebound = [
            http.post(url, json=INITIALIZE, headers={**ACCEPT, "Host": f"{name}:{port}"})
            # This machine's own name is not a loopback address: a rebinding page may own it.
            for name in ("evil.test", socket.gethostname())
        ]
        foreign = http.post(url, json=INITIALIZE, headers={**ACCEPT, "Origin": "http://evil.test"})
        own = [
            http.post(
                url,
                json=INITIALIZE,
                headers={**ACCEPT, "Host": f"{netloc}:{port}", "Origin": f"http://{netloc}:{port}"},
            )
            for netloc in netlocs
        ]
    for refused in rebound:
        assert (refused.status_code, refused.text) == (421, "Invalid Host header")
    assert (foreign.status_code, foreign.text) == (403, "Invalid Origin header")
    for answer in own:
        assert answer.status_code == 200, answer.text
        assert "serverInfo" in answer.text
