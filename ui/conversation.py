"""The conversation: questions, answers streaming in, and each answer's badge.

An answer streams as plain text and is re-rendered as inert Markdown when it is finished
(ui/plain.py): nothing from a document or a model is ever rendered as HTML, loaded or made a
link. Docent's own links (sources, re-ask, what was sent) carry a secret of this panel, so text
that imitates one still cannot trigger an action.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from app.answering import (
    AnswerEvent,
    Citation,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
    Token,
    Waiting,
)
from app.answering.metrics import AnswerMetrics
from app.llm.engine import Message
from ui.plain import insert_markdown, plain_label, plain_tooltip
from ui.theme import route_colour

_METRICS = [field.name for field in fields(AnswerMetrics) if field.name != "cached_tokens"]


def other_route(route: str) -> str:
    return "local" if route == "cloud" else "cloud"


@dataclass(frozen=True, slots=True)
class _Reask:
    question: str
    route: str


@dataclass(frozen=True, slots=True)
class _Sent:
    messages: tuple[Message, ...]


def sent_as_text(messages: tuple[Message, ...]) -> str:
    return "\n\n".join(f"── {m.role} ──\n{m.content}" for m in messages)


class ConversationPanel(QWidget):
    """The transcript and the live badge of the answer in progress.

    Signals: source_clicked(object) — a cited Source whose link was clicked;
    reask_requested(str, str) — question and route of a "re-ask with the other route" link;
    sent_requested(str) — what a cloud call sent, as text, when its link was clicked.
    """

    source_clicked = Signal(object)
    reask_requested = Signal(str, str)
    sent_requested = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.transcript = QTextBrowser()
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._open_link)
        self.badge = plain_label("Ask a question about your documents.")  # reasons, errors
        self.badge.setWordWrap(True)
        self.badge.setObjectName("badge")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.badge)
        self._ticker = QTimer(self)
        self._ticker.setInterval(100)
        self._ticker.timeout.connect(self._tick)
        self._asked_at = 0.0
        self._route = ""
        self._first_token_at: float | None = None
        self._links: dict[str, Source | _Reask | _Sent] = {}
        self._link_secret = secrets.token_urlsafe(16)
        self._answer_start = 0
        self._question = ""
        self._progress = ""  # what the route says while no text has come: queue, status

    def begin(self, question: str) -> None:
        self._question = question
        self._write(f"\n\nQ: {question}\nA: ")
        self._answer_start = self._end()
        self._asked_at = time.perf_counter()
        self._first_token_at = None
        self._route = "routing…"
        self._ticker.start()
        self._tick()

    def apply(self, event: AnswerEvent) -> None:
        match event:
            case SourcesFound():
                pass  # only the sources the answer used are listed, when it is finished
            case InConversation(standalone=standalone):
                # On request (hover): what a follow-up was searched as.
                self.badge.setToolTip(plain_tooltip(f"Searched the documents for: {standalone}"))
            case RouteDecided(route=route, model=model, reason=reason):
                if self._first_token_at is not None:  # a cascade: the draft is being replaced
                    self._write(f"\n[{reason}; asking the {route} route]\n")
                    self._first_token_at = None
                self._route = f"route: {route} ({model}) · why: {reason}"
                self.badge.setProperty("route", route)
                colour = route_colour(route).name()
                self.badge.setStyleSheet(
                    f"#badge {{ border-left: 6px solid {colour}; padding-left: 6px; }}"
                )
                self._tick()
            case Waiting(ahead=ahead):
                self._progress = f" · waiting: {ahead} answer{'s' if ahead > 1 else ''} ahead"
                self._tick()
            case Status(text=text):
                self._progress = f" · {text}"
                self._tick()
            case Token(text=text):
                self._progress = ""
                if self._first_token_at is None:
                    self._first_token_at = time.perf_counter()
                self._write(text)
            case Citation():
                pass  # listed with the sources when the answer is finished
            case Finished(
                answer=answer, citations=citations, metrics=metrics, cancelled=cancelled, sent=sent
            ):
                self._ticker.stop()
                self._render_markdown(answer)
                if cancelled:
                    self._write(" [stopped]")
                if citations:
                    self._write("\nSources:")
                    for source in citations:
                        self._write("\n   ")
                        self._link(f"[{source.number}] {source.where}", source)
                self._write("\n" + metrics.footer() + "\n")
                route = other_route(metrics.route)
                self._link(f"↻ Re-ask with the {route} route", _Reask(self._question, route))
                if sent:
                    self._write("   ")
                    self._link("⇪ What was sent to the cloud", _Sent(sent))
                self.badge.setText(metrics.footer())
            case Failed(error=error):
                self._ticker.stop()
                self._write(f"\n[failed: {error}]")
                self.badge.setText(f"failed: {error}")

    def clear(self, note: str = "Ask a question about your documents.") -> None:
        """An empty transcript: a new conversation."""
        self.transcript.clear()
        self._links.clear()
        self.badge.setText(note)

    def replay(self, turns: Sequence[dict[str, Any]]) -> None:
        """A kept conversation's turns (its history rows), with their sources and badges."""
        self.clear("Reopened: the next question continues this conversation.")
        shown: dict[int, Source] = {}  # the conversation's sources, by their number
        for row in turns:
            turn = row["turn"] or {"sources": []}
            shown |= {s["number"]: Source(**s) for s in turn["sources"]}
            self._question = row["question"]
            self._write(f"\n\nQ: {row['question']}\nA: ")
            if row["status"] == "failed":
                self._write(f"[failed: {row['error']}]")
                continue
            insert_markdown(self._end_cursor(), row["answer"])
            if row["citations"]:
                self._write("\nSources:")
            for cited in row["citations"]:
                self._write("\n   ")
                label = f"[{cited['number']}] {cited['where']}"
                if (source := shown.get(cited["number"])) is not None:
                    self._link(label, source)
                else:  # a cached answer's turn: its sources were not kept
                    self._write(label)
            metrics = AnswerMetrics(**{name: row[name] for name in _METRICS})
            self._write("\n" + metrics.footer() + "\n")

    def cited_sources(self) -> list[Source]:
        """Every source linked in the transcript, oldest first."""
        return [target for target in self._links.values() if isinstance(target, Source)]

    def _tick(self) -> None:
        if self._first_token_at is None:
            waited = time.perf_counter() - self._asked_at
            ttft = f"TTFT {waited:.1f} s…"
        else:
            ttft = f"TTFT {self._first_token_at - self._asked_at:.2f} s"
        self.badge.setText(f"{self._route}{self._progress} · {ttft}")

    def _render_markdown(self, answer: str) -> None:
        """Replace the streamed plain text with its Markdown rendering: any HTML in the answer
        (echoed from a document, or invented) shows as text, links as words, images as alt text."""
        cursor = self.transcript.textCursor()
        cursor.setPosition(self._answer_start)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        insert_markdown(cursor, answer)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self.transcript.setTextCursor(cursor)

    def _end(self) -> int:
        return self._end_cursor().position()

    def _end_cursor(self) -> QTextCursor:
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        return cursor

    def _link(self, text: str, target: Source | _Reask | _Sent) -> None:
        href = f"docent-link:{self._link_secret}/{len(self._links)}"
        self._links[href] = target
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(href)
        link.setFontUnderline(True)
        link.setForeground(self.palette().link())
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, link)  # still plain text: only the format carries the link
        cursor.setCharFormat(QTextCharFormat())
        self.transcript.setTextCursor(cursor)

    def _open_link(self, url: QUrl) -> None:
        match self._links.get(url.toString()):
            case Source() as source:
                self.source_clicked.emit(source)
            case _Reask(question=question, route=route):
                self.reask_requested.emit(question, route)
            case _Sent(messages=messages):
                self.sent_requested.emit(sent_as_text(messages))

    def _write(self, text: str) -> None:
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, QTextCharFormat())  # plain text only, never a link
        self.transcript.setTextCursor(cursor)
        self.transcript.ensureCursorVisible()
