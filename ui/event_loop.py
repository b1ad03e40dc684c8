"""The window's asyncio loop: qasync's, on the Qt event loop."""

from __future__ import annotations

import sys
from typing import Any

import qasync


class EventLoop(qasync.QEventLoop):  # type: ignore[misc]  # qasync has no type hints
    """qasync's loop with the async-generator hooks asyncio's own loops install as they run.

    qasync's `run_forever` leaves them out, so an async generator left unfinished (a stream
    whose reader stopped early) was closed by the garbage collector, where an `await` in its
    `finally` fails with "async generator ignored GeneratorExit"; with the hooks the loop
    closes it as a task, and `shutdown_asyncgens` closes the rest at the end."""

    def run_forever(self) -> Any:
        before = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*before)
