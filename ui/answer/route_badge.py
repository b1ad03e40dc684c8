"""The route badge under an answer: a coloured chip for the route, the model, and the live
numbers (TTFT ticking until the first token, then total, tok/s, tokens and cost); the router's
reason on hover; the whole line copyable."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QMenu, QWidget

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
from app.answering.metrics import AnswerMetrics, describe_cost
from ui.plain import plain_label, plain_tooltip
from ui.theme import error_colour, route_colour

TICK_MS = 100


class RouteBadge(QWidget):
    """No signals: the conversation hands it the answer's events.

    `text()` is the badge as one line (what Copy puts on the clipboard): the metrics' footer
    once the answer is finished.
    """

    def __init__(self) -> None:
        super().__init__()
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # reachable by keyboard, to copy it
        self.setAccessibleName("Route and timings")
        self.chip = plain_label()
        self.chip.setObjectName("routeChip")
        self.chip.hide()
        self.model = plain_label()
        self.numbers = plain_label()
        self.numbers.setWordWrap(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.addWidget(self.chip)
        layout.addWidget(self.model)
        layout.addWidget(self.numbers, 1)
        self.ticker = QTimer(self)
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self._tick)
        self._asked_at = 0.0
        self._first_token_at: float | None = None
        self._tokens = 0  # streamed so far (text pieces: a token each from every route)
        self._route = ""
        self._reason = ""
        self._searched_for = ""  # a follow-up's standalone form, as retrieval read it
        self._progress = ""  # what the route says while no text has come: queue, status
        self._text = ""

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
        self._show_route("routing…", "", "")
        self.ticker.start()
        self._tick()

    def apply(self, event: AnswerEvent) -> None:
        match event:
            case InConversation(standalone=standalone):
                self._searched_for = standalone
                self._show_tooltip()
            case RouteDecided(route=route, model=model, reason=reason):
                self._first_token_at = None  # a cascade restarts the wait for text
                self._tokens = 0
                self._show_route(route, model, reason)
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
            case Finished(metrics=metrics):
                self.settle(metrics)
            case Failed(error=error):
                self.fail(error)

    def settle(self, metrics: AnswerMetrics) -> None:
        """The answer's recorded numbers replace the live ones."""
        self.ticker.stop()
        self._show_route(metrics.route, metrics.model, metrics.reason)
        ttft = "–" if metrics.ttft_s is None else f"{metrics.ttft_s:.2f} s"
        rate = "–" if metrics.tokens_per_s is None else f"{metrics.tokens_per_s:.1f} tok/s"
        self.numbers.setText(
            f"TTFT {ttft} · total {metrics.total_s:.1f} s · {rate} · "
            f"{metrics.prompt_tokens}+{metrics.completion_tokens} tokens · "
            f"{describe_cost(metrics.cost_usd)}"
        )
        self._text = metrics.footer()
        self.setAccessibleDescription(self._text)  # route, reason and numbers, as copied

    def fail(self, error: str) -> None:
        self.ticker.stop()
        self.chip.hide()
        self.model.clear()
        self.numbers.setText(f"failed: {error}")
        self.numbers.setStyleSheet(f"color: {error_colour(self.palette()).name()}")
        self._text = f"failed: {error}"
        self.setAccessibleDescription(self._text)

    def _show_route(self, route: str, model: str, reason: str) -> None:
        self._route, self._reason = route, reason
        self.numbers.setStyleSheet("")
        self.chip.setText(route)
        self.chip.setVisible(bool(route))
        colour = route_colour(route).name()
        self.chip.setStyleSheet(
            f"#routeChip {{ background: {colour}; color: white; border-radius: 8px;"
            " padding: 1px 8px; font-weight: bold; }"
        )
        self.model.setText(model)
        self._show_tooltip()
        self.setAccessibleDescription(f"{route} {model}: {reason}")

    def _show_tooltip(self) -> None:
        """On hover: why the route answered, and what a follow-up was searched as."""
        lines = [f"why: {self._reason}"] if self._reason else []
        if self._searched_for:
            lines.append(f"searched the documents for: {self._searched_for}")
        tip = plain_tooltip("\n".join(lines))
        for label in (self.chip, self.model, self.numbers):
            label.setToolTip(tip)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._first_token_at is None:
            ttft = f"TTFT {now - self._asked_at:.1f} s…"
        else:
            ttft = f"TTFT {self._first_token_at - self._asked_at:.2f} s"
            ttft += f" · {self._tokens} tokens"
            if self._tokens > 1 and now > self._first_token_at:  # the decode rate, live
                ttft += f" · {(self._tokens - 1) / (now - self._first_token_at):.1f} tok/s…"
        self.numbers.setText(ttft + self._progress)
        route = self._route  # "routing…" until decided, then as the finished footer says it
        if self._reason:
            route = f"route: {route} ({self.model.text()}) · why: {self._reason}"
        self._text = f"{route}{self._progress} · {ttft}"

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        menu.addAction("Copy", self.copy)
        menu.exec(event.globalPos())
