"""Waiting on a Qt signal inside the running qasync loop, without sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import SignalInstance


async def until(signal: SignalInstance, condition: Callable[[], bool]) -> None:
    """Wait (at most a minute) for `condition`, checked now and each time `signal` fires."""
    event = asyncio.Event()

    def check() -> None:
        if condition():
            event.set()

    signal.connect(check)
    try:
        check()
        await asyncio.wait_for(event.wait(), 60)
    finally:
        signal.disconnect(check)
