"""`python -m ui.tools.start_probe`: the app's start-up exactly as a user gets it, ending as soon
as the window is usable (shown, library listed, first paint), when it prints USABLE and closes.
`docent bench gui` times it from spawn to that line; it loads what the launcher loads, in the
launcher's order."""

from __future__ import annotations

import asyncio
import gc
import sys

USABLE = "usable"


def main() -> int:
    gc.disable()  # as ui.launcher.collect_later() does before the window's modules load
    from app.bootstrap import Docent  # the core before PySide6, as ui.main has it
    from ui.main import open_window, run

    # isort: split
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    async def until_usable(_: QApplication) -> int:
        docent = Docent.from_environment()
        await docent.open()
        try:
            async with open_window(docent):
                # A zero timer fires once the events already queued (the first paint) are handled.
                painted = asyncio.get_running_loop().create_future()
                QTimer.singleShot(0, lambda: painted.set_result(None))
                await painted
                print(USABLE, flush=True)
        finally:
            await docent.close()
        return 0

    return run(session=until_usable)


if __name__ == "__main__":
    sys.exit(main())
