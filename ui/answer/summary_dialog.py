"""The summary dialog: what a document's summary will take (local time, each cloud model's
cost), the route the user picks, then the summary streaming with its progress (step n of N),
Stop, and its cited pages as links (the conversation panel renders it as it renders answers).

A stored summary opens at once, without asking: it costs nothing.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.answering import Failed, Finished
from app.answering.desk import SummaryJob
from app.answering.summary import SummaryProgress
from app.bootstrap import Docent
from app.llm.engine import CancelToken
from ui.answer.source_cards import Thumbnails
from ui.answer.turns import TurnsView
from ui.background import Background
from ui.plain import plain_label


class SummaryDialog(QDialog):
    """Signals: source_clicked(object) — a cited page's Source, clicked; step_started(int, int)
    — step n of N begins; finished_summary() — after the summary ends, however it ended;
    cloud_setup_requested() — its re-ask button, where no cloud is set up to re-ask with."""

    source_clicked = Signal(object)
    cloud_setup_requested = Signal()
    step_started = Signal(int, int)
    finished_summary = Signal()

    def __init__(self, docent: Docent, document_id: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.docent = docent
        self.document_id = document_id
        self.setWindowTitle(self.tr("Summary"))
        self.estimate_label = plain_label(self.tr("Reading the document's sections…"))
        self.estimate_label.setWordWrap(True)
        self.route = QComboBox()
        self.start_button = QPushButton(self.tr("Summarize"))
        self.start_button.setEnabled(False)
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton(self.tr("Stop"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setFormat("")
        self.step_label = plain_label("")
        self.background = Background(self._failed)
        self.turns = TurnsView(Thumbnails(docent), self.background)
        self.turns.source_clicked.connect(self.source_clicked)
        self.turns.cloud_set_up = docent.settings.cloud.configured
        self.turns.cloud_setup_requested.connect(self.cloud_setup_requested)
        self.turns.reask_requested.connect(
            lambda _question, route: self.start(route_choice=(route, None))
        )
        choice = QHBoxLayout()
        choice.addWidget(self.route, 1)
        choice.addWidget(self.start_button)
        choice.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.estimate_label)
        layout.addLayout(choice)
        layout.addWidget(self.progress)
        layout.addWidget(self.step_label)
        layout.addWidget(self.turns, 1)
        self.resize(760, 560)
        self.job: SummaryJob | None = None
        self.summarizing: asyncio.Task[None] | None = None
        self._cancel: CancelToken | None = None
        self.preparing = self.background.run(self._prepare())

    async def _prepare(self) -> None:
        """Plan and estimate off the GUI thread (the library's reader, the model's loading)."""
        self.job = job = await self.docent.desk.summary(self.document_id)
        plan, estimate = job.plan, job.estimate
        self.setWindowTitle(plan.label)
        if estimate.stored:
            self.estimate_label.setText(self.tr("This summary is stored: it opens at once."))
            self.start(route_choice=(None, None))
            return
        steps = estimate.steps
        self.estimate_label.setText(
            (
                self.tr("{name}: 1 section")
                if len(plan.sections) == 1
                else self.tr("{name}: {sections} sections")
            ).format(name=plan.document.name, sections=len(plan.sections))
            + (self.tr(", 1 step") if steps == 1 else self.tr(", {steps} steps")).format(
                steps=steps
            )
            + self.tr(", up to {tokens} tokens to read. Choose where to make it:").format(
                tokens=f"{estimate.prompt_tokens:,}"
            )
        )
        self.route.addItem(
            self.tr("Local model: {estimate}").format(estimate=estimate.describe_local()),
            ("local", None),
        )
        for cloud in estimate.cloud:
            cost = (
                self.tr("price unknown")
                if cloud.cost_usd is None
                else self.tr("at most {cost}").format(cost=f"${cloud.cost_usd:.4f}")
            )
            self.route.addItem(
                self.tr("Cloud {model}: {cost}").format(model=cloud.model, cost=cost),
                ("cloud", cloud.model),
            )
        if not estimate.cloud:
            self.route.addItem(self.tr("Cloud: no cloud configured"), None)
            # Listed, so the user sees why, but not chosen.
            self.route.model().item(self.route.count() - 1).setEnabled(False)  # type: ignore[attr-defined]
        self.start_button.setEnabled(True)

    def start(self, *, route_choice: tuple[str | None, str | None] | None = None) -> None:
        """Make the summary on the chosen route (`route_choice`: (route, model) instead of the
        list's choice; (None, None) opens the stored one)."""
        if self.job is None:
            return
        route, model = route_choice or self.route.currentData()
        self.stop()
        self._cancel = CancelToken()
        self.summarizing = self.background.run(
            self._summarize(self.job, self._cancel, route, model)
        )

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    async def _summarize(
        self, job: SummaryJob, cancel: CancelToken, route: str | None, model: str | None
    ) -> None:
        plan = job.plan
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.progress.setRange(0, plan.steps)
        self.progress.setValue(0)
        self.turns.begin(plan.label)
        try:
            async for event in job.run(route, model, cancel):
                if isinstance(event, SummaryProgress):
                    self.progress.setValue(event.step - 1)
                    self.step_label.setText(
                        self.tr("Step {step} of {steps}: {what}").format(
                            step=event.step, steps=event.steps, what=event.what
                        )
                    )
                    self.step_started.emit(event.step, event.steps)
                    continue
                self.turns.apply(event)
                if isinstance(event, Finished):
                    self.progress.setValue(plan.steps)
                    self.step_label.setText(
                        self.tr("Stopped.") if event.cancelled else self.tr("Done.")
                    )
                elif isinstance(event, Failed):
                    self.step_label.setText(self.tr("Failed: {error}").format(error=event.error))
        finally:
            self.stop_button.setEnabled(False)
            self.start_button.setEnabled(self.route.count() > 0)
            self.finished_summary.emit()

    def _failed(self, error: BaseException) -> None:
        self.estimate_label.setText(self.tr("Cannot summarize: {error}").format(error=error))
        self.turns.apply(Failed(str(error), None))
        self.finished_summary.emit()

    def done(self, result: int) -> None:
        """Closing stops the summary: nobody is reading it."""
        self.stop()
        super().done(result)

    async def close_async(self) -> None:
        await self.background.close()
        self.close()
