"""One thread per non-thread-safe resource (the Llama object, an SQLite connection, PyMuPDF).

Under qasync, coroutines run on the GUI thread, so every blocking call goes through a worker.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import threading
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType, TracebackType
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class StreamClosed(Exception):
    """Raised inside a producer when nobody listens to its stream any more."""


class Emitter(Generic[T]):
    """What a stream's producer calls with each item; `closed` lets a producer that waits on
    something else (a child process) notice that nobody listens before it has an item."""

    def __init__(self, send: Callable[[T], None], closed: threading.Event) -> None:
        self._send = send
        self._closed = closed

    def __call__(self, item: T) -> None:
        if self._closed.is_set():
            raise StreamClosed
        self._send(item)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


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

    async def stream(self, producer: Callable[[Emitter[T]], None]) -> AsyncGenerator[T, None]:
        """Run `producer(emit)` on the worker thread; yield each emitted item on the event loop.

        Items cross with call_soon_threadsafe, so the loop never blocks. When the consumer stops
        early, the producer's next `emit` raises StreamClosed: it unwinds on its own thread
        (rolling back any transaction it holds) before this generator finishes closing.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        closed = threading.Event()

        def send(kind: str, value: object) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        emit = Emitter[T](lambda item: send("item", item), closed)

        def pump() -> None:
            try:
                producer(emit)
            except StreamClosed:
                pass
            except BaseException as error:  # handed to the consumer, raised there
                send("error", error)
            else:
                send("done", None)

        job = asyncio.ensure_future(self.run(pump))

        def unstarted(job: asyncio.Future[None]) -> None:
            # pump reports its own ends; only a worker that could not run it (shut down) is left
            if not job.cancelled() and (error := job.exception()) is not None:
                queue.put_nowait(("error", error))

        job.add_done_callback(unstarted)
        try:
            while True:
                kind, value = await queue.get()
                if kind == "item":
                    yield value
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            closed.set()
            await asyncio.shield(job)

    def shutdown(self) -> None:
        """Finish queued calls and join the thread."""
        self._executor.shutdown(wait=True, cancel_futures=False)


class Subscription(Generic[T]):
    """Every event a publisher sends (`publish`) from the subscription's creation on, in order,
    until it is closed: the window, the CLI and the tests follow a part of the core this way."""

    def __init__(self, listeners: set[asyncio.Queue[T]]) -> None:
        self._listeners = listeners
        self._queue: asyncio.Queue[T] = asyncio.Queue()
        listeners.add(self._queue)

    def __aiter__(self) -> Subscription[T]:
        return self

    async def __anext__(self) -> T:
        return await self._queue.get()

    def close(self) -> None:
        self._listeners.discard(self._queue)

    def __enter__(self) -> Subscription[T]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType
    ) -> None:
        self.close()


def publish(listeners: set[asyncio.Queue[T]], event: T) -> None:
    """Send `event` to every open Subscription over `listeners` (on the event loop)."""
    for queue in listeners:
        queue.put_nowait(event)


async def import_later(module: str) -> ModuleType:
    """Import a part the window does not need to open (the answering pipeline, the keychain,
    the MCP SDK) when it is first used, in a thread, rather than at every start-up."""
    return await asyncio.to_thread(importlib.import_module, module)
