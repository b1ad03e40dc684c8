"""The desktop app serves its library to other MCP clients in the background (the settings
switch), on its own loop, says so in the status bar, and shows the configuration to paste."""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import qasync
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.answering.events import DRAFT_REPLACED
from app.paths import Paths
from app.processes import free_loopback_port
from tests.gui.conftest import main_window
from tests.gui.waiting import until
from ui.settings.settings_dialog import SettingsDialog
from ui.window.conversation_list import CLIENT_MARK
from ui.window.main_window import MainWindow


@pytest.fixture
def port() -> int:
    return free_loopback_port()


@pytest.fixture
def window(
    qapp: QApplication, loop: qasync.QEventLoop, isolated_paths: Paths, port: int
) -> Iterator[MainWindow]:
    """A first start with the switch already on (saved by an earlier run), on a machine without a
    keychain where the user allowed the key file (the server's token is kept there)."""
    settings = {
        "serve_mcp": {"enabled": True, "port": port},
        "secrets": {"plaintext_file_consent": True},
    }
    isolated_paths.settings_file.write_text(json.dumps(settings), "utf-8")
    yield from main_window(loop, embeddings=False)


def bearer(window: MainWindow) -> dict[str, str]:
    assert window.serving.token is not None
    return {"Authorization": f"Bearer {window.serving.token}"}


async def call(url: str, tool: str, arguments: dict[str, Any], token: dict[str, str]) -> Any:
    """A tool call from another MCP client (the Python SDK's), served by the window's loop."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30, headers=token))
        client = await stack.enter_async_context(
            Client(streamable_http_client(url, http_client=http))
        )
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return result.structured_content


def switch(window: MainWindow, loop: qasync.QEventLoop, *, on: bool, port: int) -> SettingsDialog:
    dialog = window.open_settings()
    dialog.serving.enabled.setChecked(on)
    dialog.serving.port.setValue(port)

    async def submit() -> None:
        # One coroutine: qasync drops callbacks still pending when run_until_complete returns,
        # so the task that (re)starts or stops the server is awaited within the same run.
        assert await dialog.submit() is True
        await window.wait_for_tasks()

    loop.run_until_complete(submit())
    return dialog


def test_the_app_serves_its_library_until_switched_off(
    window: MainWindow, loop: qasync.QEventLoop, port: int
) -> None:
    url = f"http://127.0.0.1:{port}/mcp"

    async def first_start() -> None:
        await window.start(welcome=False)
        await window.wait_for_tasks()  # the first run indexes the guide

    loop.run_until_complete(first_start())
    assert window.serving.url == url
    assert window.serving.label.text() == "MCP server: on"
    assert url in window.serving.label.toolTip()

    # Every account on the machine reaches 127.0.0.1: a client without the token gets nothing.
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}

    async def without_token() -> int:
        async with httpx.AsyncClient(timeout=30) as http:
            return (await http.post(url, json=initialize, headers=accept)).status_code

    assert loop.run_until_complete(without_token()) == 401
    listed = loop.run_until_complete(call(url, "list_documents", {}, bearer(window)))
    assert [d["name"] for d in listed["documents"]] == ["welcome-to-docent.md"]
    query = {"query": "cite pages"}
    found = loop.run_until_complete(call(url, "search_documents", query, bearer(window)))
    assert found["passages"][0]["document"] == "welcome-to-docent.md"

    moved = free_loopback_port()
    dialog = switch(window, loop, on=True, port=moved)
    assert window.serving.url == f"http://127.0.0.1:{moved}/mcp"
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=5)  # the old port is free again
    token = window.serving.token
    assert token is not None
    shown = dialog.serving.http_snippet.toPlainText()
    assert token not in shown  # masked on screen (a screenshot, a shared screen)
    assert json.loads(shown)["mcpServers"]["docent"]["headers"]["Authorization"].endswith(
        token[-4:]
    )
    dialog.serving.copy(dialog.serving.http_snippet)  # copied whole
    assert json.loads(QApplication.clipboard().text()) == {
        "mcpServers": {
            "docent": {
                "type": "http",
                "url": f"http://127.0.0.1:{moved}/mcp",
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    stdio = json.loads(dialog.serving.stdio_snippet.toPlainText())["mcpServers"]["docent"]
    assert stdio["args"][-1] == "serve-mcp"
    assert Path(stdio["command"]).is_file()
    assert stdio["env"]["DOCENT_HOME"] == os.environ["DOCENT_HOME"]  # the same library
    dialog.serving.copy(dialog.serving.stdio_snippet)
    assert QApplication.clipboard().text() == dialog.serving.stdio_snippet.toPlainText()

    switch(window, loop, on=False, port=moved)
    assert window.serving.url is None
    assert window.serving.label.text() == ""
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{moved}/mcp", timeout=5)
    assert json.loads(window.docent.paths.settings_file.read_text())["serve_mcp"] == {
        "enabled": False,
        "port": moved,
    }


def test_a_port_in_use_is_reported_not_fatal(
    window: MainWindow, loop: qasync.QEventLoop, port: int
) -> None:
    with socket.create_server(("127.0.0.1", port)):  # another program holds the port
        loop.run_until_complete(window.serving.apply())
        assert window.serving.url is None
        assert window.serving.label.text() == "MCP server: failed"
        assert f"cannot serve on 127.0.0.1:{port}: " in window.serving.label.toolTip()
    loop.run_until_complete(window.serving.apply())  # the switch is still on: it retries
    assert window.serving.url == f"http://127.0.0.1:{port}/mcp"


def test_a_client_asks_through_the_app_while_the_window_keeps_working(
    window: MainWindow, loop: qasync.QEventLoop, port: int
) -> None:
    """`ask` from another client: the window's own model answers, the text streams to the
    client as progress, and the GUI thread keeps turning meanwhile."""
    settings = window.docent.settings
    short = settings.model_copy(
        update={"local": settings.local.model_copy(update={"max_tokens": 32})}
    )
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))

    async def scenario() -> tuple[Any, list[str], float, float]:
        await window.start(welcome=False)
        await window.wait_for_tasks()  # the first run indexes the guide
        await window.docent.apply_settings(short)
        partial: list[str] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            partial.append(message or "")

        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(timeout=300, headers=bearer(window))
            )
            client = await stack.enter_async_context(
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http))
            )
            timer.start()
            started = time.perf_counter()
            result = await client.call_tool(
                "ask",
                {"question": "How do I cite pages?"},
                read_timeout_seconds=300,
                progress_callback=progress,
            )
            finished = time.perf_counter()
            timer.stop()
        # The client's conversation is in the window's sidebar at once, marked as the client's.
        listed = window.conversation_list.list

        def in_sidebar() -> bool:
            titles = [listed.item(row).text() for row in range(listed.count())]
            return f"{CLIENT_MARK}How do I cite pages?" in titles

        await until(window.answers_shown, in_sidebar)
        return result, partial, started, finished

    result, partial, started, finished = loop.run_until_complete(scenario())
    assert not result.is_error, result.content
    answer = result.structured_content
    assert len(partial) >= 3
    streamed = "".join(partial)
    if answer["declined"]:  # no source supports the streamed draft: the stream says so
        assert streamed.endswith(f"\n\n[{DRAFT_REPLACED}]\n\n{answer['answer']}")
    else:  # the streamed text, and a marker after each sentence Docent tied to a source
        assert re.sub(r" \[\d+\]", "", answer["answer"]) == streamed.strip()
    assert answer["metrics"]["route"] == "local"
    assert {c["document"] for c in answer["citations"]} <= {"welcome-to-docent.md"}
    assert window.docent.chat.loaded  # the window's engine answered
    # The loop kept serving Qt timers while the model worked (a stalled GUI thread ticks once).
    assert len(ticks) >= (finished - started) / 0.05 / 4
