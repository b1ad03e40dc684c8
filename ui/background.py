"""The one way the front end starts background work (as Anki's `CollectionOp`).

`Background.run(work, failure=…)` starts a coroutine on the loop as a task that stays referenced
until it ends. A failure the work did not handle itself is logged and reaches the user: through
`failure` when given, else through the owner's default (the main window's status bar, a dialog's
message line). A cancelled task is not a failure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")
Failure = Callable[[BaseException], None]

log = logging.getLogger(__name__)


class Background:
    def __init__(self, failure: Failure) -> None:
        self._default_failure = failure
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listeners: set[asyncio.Task[Any]] = set()

    def run(
        self,
        work: Coroutine[Any, Any, T],
        failure: Failure | None = None,
        *,
        listener: bool = False,
    ) -> asyncio.Task[T]:
        """Start `work`. A `listener` runs until closed (an event pump): `wait()` does not wait
        for it."""
        task = asyncio.ensure_future(work)
        started = self._listeners if listener else self._tasks
        started.add(task)
        task.add_done_callback(started.discard)
        task.add_done_callback(partial(self._finished, failure or self._default_failure))
        return task

    async def wait(self) -> None:
        """Until every task (not listener) has ended, those they start included."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Cancel everything still running, and wait for it to end."""
        for task in [*self._tasks, *self._listeners]:
            task.cancel()
        await self.wait()
        await asyncio.gather(*list(self._listeners), return_exceptions=True)

    def _finished(self, failure: Failure, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or (error := task.exception()) is None:
            return
        log.error("background work failed: %s", error, exc_info=error)
        failure(error)
