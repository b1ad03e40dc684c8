"""ui.background: the one way the window starts work, and where an unhandled failure goes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
import qasync

from tests.gui.conftest import main_window
from ui.background import Background
from ui.window.main_window import MainWindow


async def fail(message: str) -> None:
    await asyncio.sleep(0)
    raise RuntimeError(message)


def test_a_failure_reaches_its_own_path_or_the_default_and_the_log(
    loop: qasync.QEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    default: list[str] = []
    own: list[str] = []
    background = Background(lambda error: default.append(str(error)))

    async def scenario() -> None:
        background.run(fail("disk full"))
        background.run(fail("no model"), failure=lambda error: own.append(str(error)))
        cancelled = background.run(asyncio.Event().wait())
        cancelled.cancel()
        await background.wait()

    with caplog.at_level(logging.ERROR, logger="ui.background"):
        loop.run_until_complete(scenario())
    assert default == ["disk full"]  # a cancelled task is not a failure
    assert own == ["no model"]
    assert [r.getMessage() for r in caplog.records] == [
        "background work failed: disk full",
        "background work failed: no model",
    ]


def test_wait_skips_listeners_and_close_cancels_them(loop: qasync.QEventLoop) -> None:
    background = Background(lambda error: pytest.fail(f"unexpected failure: {error}"))
    events: asyncio.Queue[str] = asyncio.Queue()
    seen: list[str] = []

    async def listen() -> None:
        while True:
            seen.append(await events.get())

    async def scenario() -> asyncio.Task[None]:
        listener = background.run(listen(), listener=True)
        background.run(events.put("indexed"))
        await background.wait()  # returns although the listener runs on
        await asyncio.sleep(0)
        assert not listener.done()
        await background.close()
        return listener

    listener = loop.run_until_complete(scenario())
    assert listener.cancelled()
    assert seen == ["indexed"]


@pytest.fixture
def window(loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_the_windows_failed_work_shows_in_its_status_bar(
    window: MainWindow, loop: qasync.QEventLoop
) -> None:
    window.background.run(fail("the library is on a drive that went away"))
    loop.run_until_complete(window.wait_for_tasks())
    assert window.statusBar().currentMessage() == (
        "Failed: the library is on a drive that went away"
    )
