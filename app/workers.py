"""One thread per non-thread-safe resource (the Llama object, an SQLite connection, PyMuPDF).

Under qasync, coroutines run on the GUI thread, so every blocking call goes through a worker.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class SerialWorker:
    """A single thread that runs calls one after another, in submission order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"docent-{name}")

    async def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, functools.partial(function, *args, **kwargs)
        )

    def shutdown(self) -> None:
        """Finish queued calls and join the thread."""
        self._executor.shutdown(wait=True, cancel_futures=False)
