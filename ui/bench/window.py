"""The Benchmark window: `docent bench inference` against the user's own local model and cloud
routes, with a progress bar, the tables and the plots — the local-vs-cloud decision, made from
evidence on this machine."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCharts import QChartView
from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.bench.inference import bench_inference, render_inference
from app.bootstrap import Docent
from app.errors import DocentError
from ui.background import Background
from ui.bench.plots import inference_charts
from ui.plain import insert_markdown, plain_label

INTRO = QT_TRANSLATE_NOOP(
    "BenchmarkWindow",
    "Measures your local model and every configured cloud route the way the field compares "
    "them: time to first token by prompt length, prefill and decode speed, and what 1–6 "
    "concurrent requests do to each request and to the total. The quick run takes about a "
    "minute on a laptop CPU; the full run ten or more. Answers keep working meanwhile, slower.",
)


class BenchmarkWindow(QDialog):
    """Signals: finished_run(bool) — a run ended; True when it completed."""

    finished_run = Signal(bool)

    def __init__(self, docent: Docent, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.docent = docent
        self.setWindowTitle(self.tr("Benchmark: local vs cloud"))
        self.resize(900, 720)
        self.running: asyncio.Task[None] | None = None
        self.background = Background(
            lambda error: self.step.setText(self.tr("Failed: {error}").format(error=error))
        )
        self.results: dict[str, Any] | None = None

        intro = QLabel(self.tr(str(INTRO)))
        intro.setWordWrap(True)
        self.quick = QCheckBox(self.tr("Quick run"))
        self.quick.setChecked(True)
        self.run_button = QPushButton(self.tr("Run"))
        self.run_button.clicked.connect(self.start)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        controls = QHBoxLayout()
        controls.addWidget(self.quick)
        controls.addStretch()
        controls.addWidget(self.run_button)
        controls.addWidget(self.stop_button)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.step = plain_label(self.tr("Not run yet."))  # steps and errors name models and routes
        self.step.setWordWrap(True)
        self.tables = QTextBrowser()
        self.plots = QTabWidget()
        self.plots.addTab(self.tables, self.tr("Tables"))

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(controls)
        layout.addWidget(self.progress)
        layout.addWidget(self.step)
        layout.addWidget(self.plots, 1)

    def start(self) -> asyncio.Task[None]:
        if self.running is None or self.running.done():
            self.running = self.background.run(self._run(self.quick.isChecked()))
        return self.running

    def stop(self) -> None:
        if self.running is not None:
            self.running.cancel()

    async def close_async(self) -> None:
        """Stop a run in flight (its engine closes with it) and close."""
        await self.background.close()
        self.close()

    def reject(self) -> None:
        self.stop()  # closing never leaves a benchmark loading the machine unseen
        super().reject()

    def _report(self, step: str, done: int, total: int) -> None:
        if total:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        self.step.setText(step)

    async def _run(self, quick: bool) -> None:
        self.run_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.progress.setRange(0, 0)  # busy until the routes are known
        self.step.setText(self.tr("Connecting the cloud routes and loading the local model…"))
        completed = False
        try:
            self.results = await bench_inference(self.docent, quick=quick, progress=self._report)
            self._show(self.results)
            self.step.setText(self.tr("Done."))
            completed = True
        except asyncio.CancelledError:
            self.step.setText(self.tr("Stopped."))
            raise
        except DocentError as error:
            self.step.setText(self.tr("The benchmark could not run: {error}").format(error=error))
        finally:
            if not completed:  # a complete run leaves the bar full
                self.progress.setRange(0, 1)
                self.progress.setValue(0)
            self.run_button.setEnabled(True)
            self.stop_button.setEnabled(False)
            self.finished_run.emit(completed)

    def _show(self, results: dict[str, Any]) -> None:
        self.tables.clear()
        insert_markdown(self.tables.textCursor(), render_inference(results))
        while self.plots.count() > 1:
            self.plots.removeTab(1)
        for stem, chart in inference_charts(results):
            view = QChartView(chart)
            view.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.plots.addTab(view, stem.replace("-", " ").replace("ttft", "TTFT"))
