"""The route badge under an answer: a coloured chip for the route, then where it ran and why in
muted words, and on the right the live numbers (the first token's wait ticking, then the total,
the speed and the cost). Click, Enter or Space opens the details; the whole line is copyable
as the CLI's footer. Under it, where a question that looked hard was answered here because no
cloud is set up, why it looked hard and a link to set one up."""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
)
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.answering import (
    AnswerEvent,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    Status,
    Token,
    Waiting,
)
from app.answering.metrics import AnswerMetrics
from app.answering.metrics import describe_cost as cost_words
from app.llm.server_names import served_on
from app.routing import Reason
from ui.looks import link_button
from ui.plain import ElidedLabel, plain_label, plain_tooltip
from ui.route_words import looked_hard, reason_words, route_word
from ui.theme import error_colour, muted_colour, route_colour, warning_colour

TICK_MS = 100
FREE_ROUTES = ("local", "cache", "fallback")  # zero on these is free: a fallback is written here
_BRACKETED = re.compile(r"^(.*?) \((.*)\)$")  # "simple question (strong evidence)"


def plain_reason(reason: str, why: Reason | None = None) -> str:
    """The router's reason in the badge's plain words, from its code; the full reason stays in
    the details and the copied line. An answer from the history has only the English."""
    if why is not None:
        return reason_words(why)
    if match := _BRACKETED.match(reason):
        reason = f"{match[1]} · {match[2]}"
    return reason.replace("; ", " · ")


def where(route: str, model: str) -> str:
    if route == "local" and (server := served_on(model)) is not None:  # the user's own server
        return QCoreApplication.translate("RouteBadge", "{model} on {host}").format(
            model=server[0], host=server[1]
        )
    if route == "local":
        return QCoreApplication.translate("RouteBadge", "on this computer")
    if route == "cache":
        return QCoreApplication.translate("RouteBadge", "an earlier answer, again")
    return model


def describe_cost(route: str, cost_usd: float | None) -> str:
    """ "free" on this computer, "$0.0021" in the cloud, "cost unknown" without a price."""
    if cost_usd is None:
        return QCoreApplication.translate("RouteBadge", "cost unknown")
    if route in FREE_ROUTES and cost_usd == 0:
        return QCoreApplication.translate("RouteBadge", "free")
    return cost_words(cost_usd)


def _rate(tokens_per_s: float) -> str:
    """Whole tokens a second, but a slow computer's 0.7 keeps its decimal."""
    return f"{tokens_per_s:.0f}" if tokens_per_s >= 10 else f"{tokens_per_s:.1f}"


def _seconds(seconds: float | None, digits: int = 1) -> str:
    return "–" if seconds is None else f"{seconds:.{digits}f} s"


class RouteDetails(QFrame):
    """Why this route, and what the answer cost: a popup under the badge, closed by Esc or a
    click elsewhere.

    Signals: sent_requested() — "What was sent" was pressed.
    """

    sent_requested = Signal()

    def __init__(self, badge: RouteBadge) -> None:
        super().__init__(badge, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName(QCoreApplication.translate("RouteBadge", "Why this route"))
        self.form = QFormLayout(self)
        self.form.setContentsMargins(12, 10, 12, 10)
        self.setMinimumWidth(360)  # a reason or a follow-up reads as lines, not a column
        self.sent: QPushButton | None = None

    def add(self, label: str, value: str, tooltip: str = "") -> QLabel:
        shown = plain_label(value)
        shown.setWordWrap(True)
        shown.setMaximumWidth(420)
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        shown.setToolTip(plain_tooltip(tooltip))
        self.form.addRow(label, shown)
        return shown

    def add_sent_button(self) -> None:
        self.sent = QPushButton(QCoreApplication.translate("RouteBadge", "What was sent…"))
        self.sent.clicked.connect(self.sent_requested)
        self.sent.clicked.connect(self.close)
        self.form.addRow(self.sent)

    def values(self) -> dict[str, str]:
        """Each row's label and value, as shown (the tests read them)."""
        shown: dict[str, str] = {}
        for row in range(self.form.rowCount()):
            label = self.form.itemAt(row, QFormLayout.ItemRole.LabelRole)
            field = self.form.itemAt(row, QFormLayout.ItemRole.FieldRole)
            if label is not None and field is not None:
                name, value = label.widget(), field.widget()
                if isinstance(name, QLabel) and isinstance(value, QLabel):
                    shown[name.text()] = value.text()
        return shown


class RouteBadge(QWidget):
    """Signals: sent_requested() — the details' "What was sent" button;
    cloud_setup_requested() — the link under a question that looked hard, with no cloud set
    up. The conversation hands the badge the answer's events.

    `text()` is the badge as one line (what Copy puts on the clipboard): the metrics' footer
    once the answer is finished, as the CLI prints it.
    """

    sent_requested = Signal()
    cloud_setup_requested = Signal()

    def __init__(self, question: str = "") -> None:
        super().__init__()
        self.question = question  # a follow-up's search is shown where it differs
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # reachable by keyboard: details, copy
        self.setAccessibleName(QCoreApplication.translate("RouteBadge", "Route and timings"))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(
            QCoreApplication.translate(
                "RouteBadge", "Why this route, and what it cost: click, or press Enter"
            )
        )
        self.chip = plain_label()
        self.chip.setObjectName("routeChip")
        # Its own size whatever the row's height, centred: a stretched chip turned into a slab.
        self.chip.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.chip.hide()
        self.reason = ElidedLabel()
        self.numbers = plain_label()
        self.numbers.setToolTip(
            plain_tooltip(
                QCoreApplication.translate(
                    "RouteBadge",
                    "first token: the wait until the answer's first word\n"
                    "then the whole answer's time, and how fast it was written (tokens a second)",
                )
            )
        )
        self.cost = plain_label()
        for label in (self.numbers, self.cost):
            font = label.font()
            font.setPointSizeF(font.pointSizeF() * 0.9)
            label.setFont(font)
        self.hard = ElidedLabel()  # "looked hard: 2-part question ·", cut in a narrow pane
        self.set_up = link_button(
            QCoreApplication.translate(
                "RouteBadge", "Set up a cloud model to send questions like this there"
            )
        )
        self.set_up.clicked.connect(self.cloud_setup_requested)
        self.nudge = QWidget()
        nudge = QHBoxLayout(self.nudge)
        nudge.setContentsMargins(0, 0, 0, 0)
        # The words take the room up to their width (then the rest stays empty on the right).
        nudge.addWidget(self.hard, 100)
        nudge.addWidget(self.set_up)
        nudge.addStretch(1)
        self.nudge.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.chip, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addSpacing(6)  # the chip's rounded end clear of the words (it touched them)
        row.addWidget(self.reason, 1)
        row.addWidget(self.numbers)
        row.addWidget(self.cost)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.nudge)
        self.ticker = QTimer(self)
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self._tick)
        self.details: RouteDetails | None = None
        self.spending = ""  # this month's cloud spending after the answer; "" not shown
        self._asked_at = 0.0
        self._first_token_at: float | None = None
        self._tokens = 0  # streamed so far (text pieces: a token each from every route)
        self._route = ""
        self._model = ""
        self._reason = ""
        self._why: Reason | None = None
        self._searched_for = ""  # a follow-up's standalone form, as retrieval read it
        self._progress = ""  # what the route says while no text has come: queue, status
        self._metrics: AnswerMetrics | None = None
        self._sent = False  # a cloud call's messages exist to show
        self._text = ""
        self._show_colours()

    def text(self) -> str:
        return self._text

    @property
    def ticking(self) -> bool:
        return self.ticker.isActive()

    def begin(self) -> None:
        self._asked_at = time.perf_counter()
        self._first_token_at = None
        self._tokens = 0
        self._searched_for = ""
        self._route = ""
        self._progress = ""
        self._metrics = None
        self._sent = False
        self.cost.clear()
        self._show_route("routing…", "", "")
        self.ticker.start()
        self._tick()

    def apply(self, event: AnswerEvent) -> None:
        match event:
            case InConversation(standalone=standalone):
                self._searched_for = standalone
            case RouteDecided(route=route, model=model, reason=reason, why=why):
                self._first_token_at = None  # a cascade restarts the wait for text
                self._tokens = 0
                self._show_route(route, model, reason, why)
                self._tick()
            case Waiting(ahead=ahead):
                self._progress = f" · waiting: {ahead} answer{'s' if ahead > 1 else ''} ahead"
                self._tick()
            case Status(text=text):
                self._progress = f" · {text}"
                self._tick()
            case Token():
                self._tokens += 1
                if self._first_token_at is None:
                    self._first_token_at = time.perf_counter()
                    self._progress = ""
                    self._tick()
            case Finished(metrics=metrics, sent=sent):
                self._sent = bool(sent)
                self.settle(metrics)
            case Failed(error=error):
                self.fail(error)

    def settle(self, metrics: AnswerMetrics) -> None:
        """The answer's recorded numbers replace the live ones."""
        self.ticker.stop()
        self._metrics = metrics
        # The recorded code words it (a live answer's, or a recorded one shown again); the
        # decided code where the metrics came without one.
        why = metrics.why or (self._why if metrics.reason == self._reason else None)
        self._show_route(metrics.route, metrics.model, metrics.reason, why)
        rate = "–" if metrics.tokens_per_s is None else f"{_rate(metrics.tokens_per_s)} tok/s"
        self.numbers.setText(
            QCoreApplication.translate(
                "RouteBadge", "first token {ttft} · {total} · {rate} ·"
            ).format(ttft=_seconds(metrics.ttft_s), total=_seconds(metrics.total_s), rate=rate)
        )
        self.cost.setText(describe_cost(metrics.route, metrics.cost_usd))
        self._text = metrics.footer()
        self.setAccessibleDescription(self._text)  # route, reason and numbers, as copied

    def fail(self, error: str) -> None:
        self.ticker.stop()
        self.chip.hide()
        self.nudge.hide()
        self.reason.set_full_text("")
        self.cost.clear()
        self.numbers.setText(
            QCoreApplication.translate("RouteBadge", "failed: {error}").format(error=error)
        )
        self.numbers.setStyleSheet(f"color: {error_colour(self.palette()).name()}")
        self._text = f"failed: {error}"
        self.setAccessibleDescription(self._text)

    def open_details(self) -> RouteDetails | None:
        """The details under the badge: route, model, the full reason, the follow-up's search,
        every number, the month's spending and what was sent. None before a route is chosen."""
        if not self._reason:
            return None
        if self.details is not None:  # the last one, closed: rebuilt with what is known now
            self.details.deleteLater()
        details = RouteDetails(self)
        details.add(
            QCoreApplication.translate("RouteBadge", "Route"),
            f"{route_word(self._route)} — {where(self._route, self._model)}",
        )
        details.add(QCoreApplication.translate("RouteBadge", "Model"), self._model)
        why = self._reason if self._why is None else reason_words(self._why)
        details.add(QCoreApplication.translate("RouteBadge", "Why"), why)
        if self._searched_for and self._searched_for != self.question:
            details.add(
                QCoreApplication.translate("RouteBadge", "Searched for"),
                self._searched_for,
                QCoreApplication.translate(
                    "RouteBadge", "A follow-up, as the documents were searched for it"
                ),
            )
        if (metrics := self._metrics) is not None:
            details.add(
                QCoreApplication.translate("RouteBadge", "First token"),
                _seconds(metrics.ttft_s, 2),
                QCoreApplication.translate("RouteBadge", "The wait until the answer's first word"),
            )
            details.add(
                QCoreApplication.translate("RouteBadge", "Total"), _seconds(metrics.total_s, 2)
            )
            if metrics.tokens_per_s is not None:
                details.add(
                    QCoreApplication.translate("RouteBadge", "Speed"),
                    f"{metrics.tokens_per_s:.1f} tok/s",
                    QCoreApplication.translate(
                        "RouteBadge",
                        "How fast the answer was written: tokens (word pieces) a second",
                    ),
                )
            details.add(
                QCoreApplication.translate("RouteBadge", "Tokens"),
                QCoreApplication.translate("RouteBadge", "{sent} in · {written} out").format(
                    sent=metrics.prompt_tokens, written=metrics.completion_tokens
                ),
                QCoreApplication.translate(
                    "RouteBadge", "In: the question and the passages read; out: the answer written"
                ),
            )
            details.add(
                QCoreApplication.translate("RouteBadge", "Cost"),
                describe_cost(metrics.route, metrics.cost_usd),
            )
        if self.spending:
            details.add(
                QCoreApplication.translate("RouteBadge", "This month"),
                self.spending,
                QCoreApplication.translate("RouteBadge", "Cloud spending after this answer"),
            )
        if self._sent:
            details.add_sent_button()
            details.sent_requested.connect(self.sent_requested)
        details.move(self.mapToGlobal(QPoint(0, self.height())))
        self.details = details
        details.show()
        details.setFocus()
        return details

    def _show_route(self, route: str, model: str, reason: str, why: Reason | None = None) -> None:
        self._route, self._model, self._reason, self._why = route, model, reason, why
        self._show_colours()  # a failure's red, gone
        self.chip.setText(route_word(route))
        self.chip.setVisible(bool(route))
        colour = route_colour(route).name()
        self.chip.setStyleSheet(
            f"#routeChip {{ background: {colour}; color: white; border-radius: 8px;"
            " padding: 1px 8px; font-weight: bold; }"
        )
        hard = looked_hard(why)
        if hard is not None:  # the line: no cloud set up; the nudge under it: why that mattered
            why = Reason("no_cloud")
        self.reason.set_full_text(
            f"{where(route, model)} · {plain_reason(reason, why)}" if reason else ""
        )
        self.hard.set_full_text(f"{hard} ·" if hard else "")
        # As wide as its words and no wider: the link follows them, the rest of the row is empty.
        self.hard.setMaximumWidth(self.hard.fontMetrics().horizontalAdvance(f"{hard} ·") + 2)
        self.nudge.setVisible(hard is not None)
        self.setAccessibleDescription(f"{route} {model}: {reason}")

    def _show_colours(self) -> None:
        muted = muted_colour(self.palette()).name()
        for label in (self.reason, self.numbers, self.hard):
            label.setStyleSheet(f"color: {muted}")
        unknown = self._metrics is not None and self._metrics.cost_usd is None
        cost = warning_colour(self.palette()) if unknown else muted_colour(self.palette())
        self.cost.setStyleSheet(f"color: {cost.name()}")

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._first_token_at is None:
            wait = QCoreApplication.translate("RouteBadge", "first token {seconds} s…").format(
                seconds=f"{now - self._asked_at:.1f}"
            )
        else:
            wait = QCoreApplication.translate(
                "RouteBadge", "first token {seconds} s · {tokens} tokens"
            ).format(seconds=f"{self._first_token_at - self._asked_at:.2f}", tokens=self._tokens)
            if self._tokens > 1 and now > self._first_token_at:  # the decode rate, live
                wait += f" · {(self._tokens - 1) / (now - self._first_token_at):.1f} tok/s…"
        self.numbers.setText(wait)
        route = self._route  # "routing…" until decided, then as the finished footer says it
        if self._reason:
            route = f"route: {route} ({self._model}) · why: {self._reason}"
        self._text = f"{route}{self._progress} · {wait}"

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the system switched light/dark
            self._show_colours()
        super().changeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.open_details()
            return
        super().keyPressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.open_details()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        menu.addAction(QCoreApplication.translate("RouteBadge", "Copy"), self.copy)
        details = menu.addAction(
            QCoreApplication.translate("RouteBadge", "Why this route…"), self.open_details
        )
        details.setEnabled(bool(self._reason))
        menu.exec(event.globalPos())
