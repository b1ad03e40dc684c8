"""Settings → Routing & privacy: where answers are written and what may leave this computer, each
choice with what it means, and "Try a question": the route the router would choose for a question
on this library, and why, without writing an answer."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import ValidationError
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.answering.desk import Desk, RoutePreview
from app.settings import RoutingSettings
from ui.background import Background
from ui.plain import plain_label
from ui.route_words import reason_words


class RoutingPage(QWidget):
    def __init__(
        self, routing: RoutingSettings, desk: Desk, background: Background, error: QLabel
    ) -> None:
        """`error`: the dialog's label for this page's invalid values."""
        super().__init__()
        self.desk = desk
        self.background = background
        self.trying: asyncio.Task[None] | None = None
        on_server = desk.local_on_server  # then nothing is "on this computer": say where
        self.modes = self._choices(
            routing.mode,
            (
                ("auto", self.tr("Automatic"), self.tr(
                    "Each question on your model server, unless it looks hard for its model "
                    "and the cloud is allowed, reachable and within budget."
                ) if on_server else self.tr(
                    "Each question on this computer, unless it looks hard for the local model "
                    "and the cloud is allowed, reachable and within budget."
                )),
                ("local", self.tr("Your model server only"), self.tr(
                    "Every answer is written on your model server; nothing goes to a cloud."
                )) if on_server else ("local", self.tr("This computer only"), self.tr(
                    "Every answer is written by the local model; nothing is sent anywhere."
                )),
                ("cloud", self.tr("Cloud only"), self.tr(
                    "Every answer is written by a cloud model (the local one when the cloud "
                    "fails before its first word)."
                )),
            ),
        )  # fmt: skip
        self.privacies = self._choices(
            routing.privacy,
            (
                ("never", self.tr("Nothing goes to a cloud"), self.tr(
                    "The cloud is never used, whatever the route says: questions go to your "
                    "model server."
                )) if on_server else ("never", self.tr("Nothing leaves this computer"), self.tr(
                    "The cloud is never used, whatever the route says."
                )),
                ("excerpts", self.tr("Excerpts only"), self.tr(
                    "A cloud model sees the question and the retrieved excerpts: no file "
                    "names, no earlier turns."
                )),
                ("standard", self.tr("Excerpts and titles"), self.tr(
                    "Also the documents' names, pages and headings, and the conversation's "
                    "earlier turns."
                )),
            ),
        )  # fmt: skip
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0.0, 100000.0)
        self.budget.setPrefix("$ ")
        self.budget.setValue(routing.monthly_budget_usd)
        self.cache_ttl = QSpinBox()
        self.cache_ttl.setRange(0, 86400)
        self.cache_ttl.setSuffix(" s")
        self.cache_ttl.setValue(routing.cache_ttl_s)
        self.cascade = QCheckBox(
            self.tr("Answer locally first; ask the cloud when the draft fails its check")
        )
        self.cascade.setChecked(routing.cascade)
        self.topics = QPlainTextEdit(
            "\n".join(f"{topic}={model}" for topic, model in routing.topic_models.items())
        )
        self.topics.setFixedHeight(60)
        self.topics.setAccessibleName(self.tr("Cloud model per topic"))
        form = QFormLayout()
        form.addRow(self.tr("Monthly cloud budget"), self.budget)
        form.addRow(self.tr("Answer cache lifetime (0 = off)"), self.cache_ttl)
        form.addRow("", self.cascade)
        form.addRow(self.tr("Model per topic (topic=model per line)"), self.topics)
        form.addRow("", error)
        layout = QVBoxLayout(self)
        layout.addWidget(self._group(self.tr("Who writes the answers"), self.modes))
        layout.addWidget(self._group(self.tr("What a cloud model may see"), self.privacies))
        layout.addLayout(form)
        layout.addWidget(self._try_box())
        layout.addStretch(1)

    def _choices(
        self, current: str, choices: tuple[tuple[str, str, str], ...]
    ) -> dict[str, QRadioButton]:
        buttons: dict[str, QRadioButton] = {}
        group = QButtonGroup(self)  # exclusive: one choice per question
        for value, title, explanation in choices:
            button = QRadioButton(title)
            button.setAccessibleDescription(explanation)
            button.setChecked(value == current)
            button.setProperty("explanation", explanation)
            group.addButton(button)
            buttons[value] = button
        return buttons

    def _group(self, title: str, buttons: dict[str, QRadioButton]) -> QGroupBox:
        box = QGroupBox(title)
        column = QVBoxLayout(box)
        for button in buttons.values():
            explanation = QLabel(str(button.property("explanation")))
            explanation.setWordWrap(True)
            explanation.setIndent(24)  # under the button's text, past its circle
            column.addWidget(button)
            column.addWidget(explanation)
        return box

    def _try_box(self) -> QGroupBox:
        box = QGroupBox(self.tr("Try a question"))
        self.question = QLineEdit()
        self.question.setPlaceholderText(self.tr("A question about your documents"))
        self.question.setAccessibleName(self.tr("Question to try"))
        self.question.returnPressed.connect(self.try_question)
        self.try_button = QPushButton(self.tr("Which route?"))
        self.try_button.setToolTip(
            self.tr("Search the library and ask the router, with the choices above; no answer "
                    "is written and nothing is sent")
        )  # fmt: skip
        self.try_button.clicked.connect(self.try_question)
        self.route = plain_label()  # the reason quotes the question's words and servers' errors
        self.route.setWordWrap(True)
        self.route.setAccessibleName(self.tr("Route the router would choose"))
        row = QHBoxLayout()
        row.addWidget(self.question, 1)
        row.addWidget(self.try_button)
        column = QVBoxLayout(box)
        column.addLayout(row)
        column.addWidget(self.route)
        return box

    def mode(self) -> str:
        return self._checked(self.modes)

    def privacy(self) -> str:
        return self._checked(self.privacies)

    @staticmethod
    def _checked(buttons: dict[str, QRadioButton]) -> str:
        return next(value for value, button in buttons.items() if button.isChecked())

    def values(self) -> dict[str, Any]:
        return {
            "mode": self.mode(),
            "privacy": self.privacy(),
            "monthly_budget_usd": self.budget.value(),
            "cache_ttl_s": self.cache_ttl.value(),
            "cascade": self.cascade.isChecked(),
            "topic_models": {
                topic.strip(): model.strip()
                for topic, _, model in (
                    line.partition("=") for line in self.topics.toPlainText().splitlines()
                )
                if topic.strip()
            },
        }

    def try_question(self) -> asyncio.Task[None] | None:
        question = self.question.text().strip()
        if not question:
            return None
        if self.trying is not None:
            self.trying.cancel()  # the newer question replaces the one still searching
        self.route.setText(self.tr("Searching the library…"))
        self.trying = self.background.run(self._try(question))
        return self.trying

    async def _try(self, question: str) -> None:
        try:
            routing = RoutingSettings.model_validate(self.values())
        except ValidationError as error:
            self.route.setText(self.tr("Fix this first: {error}").format(
                error=error.errors()[0]["msg"]
            ))  # fmt: skip
        else:
            self.route.setText(
                self.describe(await self.desk.preview_route(question, None, routing))
            )
        self.trying = None

    def describe(self, preview: RoutePreview) -> str:
        decision, evidence = preview.decision, preview.evidence
        if decision.route != "local":
            where = self.tr("In the cloud, with {model}")
        elif preview.local_on_server:  # the model's name says which server
            where = self.tr("On your model server, with {model}")
        else:
            where = self.tr("On this computer, with {model}")
        where = where.format(model=decision.model)
        if preview.passages == 0:
            found = self.tr("No passage matches: the answer would say the documents do not tell.")
        else:
            found = self.tr("Found {passages} in {documents}.").format(
                passages=self.tr("1 passage")
                if preview.passages == 1
                else self.tr("{n} passages").format(n=preview.passages),
                documents=self.tr("1 document")
                if evidence.documents == 1
                else self.tr("{n} documents").format(n=evidence.documents),
            )
        return self.tr("{where}.\nWhy: {reason}.\n{found}\nNo answer was written.").format(
            where=where, reason=reason_words(decision.why), found=found
        )
