"""The desktop app's entry point: one asyncio loop on the Qt event loop (qasync).

A placeholder window until the desktop issue lands: it opens the library and shows its state.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

import qasync
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

from app.bootstrap import Docent


class MainWindow(QMainWindow):
    def __init__(self, docent: Docent) -> None:
        super().__init__()
        self.docent = docent
        self.setWindowTitle("Docent")
        self.status = QLabel("Opening the library…")
        self.status.setMargin(24)
        self.setCentralWidget(self.status)
        self.resize(720, 480)

    async def refresh(self) -> None:
        documents = await self.docent.library.documents()
        self.status.setText(
            f"Docent — {len(documents)} documents in the library at {self.docent.paths.database}.\n"
            "Index with `docent index PATH`, ask with `docent ask QUESTION`.\n"
            "The full desktop app arrives with the desktop issue."
        )


async def _main() -> int:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    docent = Docent.from_environment()
    await docent.open()
    try:
        window = MainWindow(docent)
        window.show()
        await window.refresh()
        await closed.wait()
    finally:
        await docent.close()
    return 0


def run(arguments: Sequence[str] = ()) -> int:
    QApplication(sys.argv[:1] + list(arguments))
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        return runner.run(_main())
