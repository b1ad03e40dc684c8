"""GUI tests: offscreen Qt, one qasync loop per test, and no leaked threads or timers."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[qasync.QEventLoop]:
    event_loop = qasync.QEventLoop(qapp)
    # Qt handlers that start tasks while no loop runs (a test's direct call) find this one.
    asyncio.set_event_loop(event_loop)
    yield event_loop
    asyncio.set_event_loop(None)
    event_loop.close()


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = {thread.ident for thread in threading.enumerate()}
    yield
    leaked = [
        thread.name
        for thread in threading.enumerate()
        if thread.ident not in before and thread.name.startswith("docent-")
    ]
    assert not leaked, f"threads left running: {leaked}"
