"""The window's loop closes async generators left unfinished, as asyncio's own loops do."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator

import qasync


def test_an_async_generator_left_unfinished_is_closed_by_the_loop(
    loop: qasync.QEventLoop,
) -> None:
    closed: list[str] = []

    async def parts() -> AsyncIterator[str]:
        try:
            yield "first"
            yield "second"
        finally:
            await asyncio.sleep(0)  # as a stream's `finally` closes its connection
            closed.append("closed")

    async def read_one() -> None:
        async for _ in parts():
            break  # left suspended after its first part
        gc.collect()
        for _ in range(3):
            await asyncio.sleep(0)  # the loop's closing task runs

    loop.run_until_complete(read_one())
    assert closed == ["closed"]
