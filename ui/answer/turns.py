"""The conversation: a card per question and answer (ui/answer/turn_card.py), newest at the bottom,
followed as it streams unless the user scrolled up to read."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QApplication, QFrame, QScrollArea, QVBoxLayout, QWidget

from app.answering import AnswerEvent, Finished, Source
from app.answering.conversation import replayed
from app.index import HistoryEntry
from ui.answer.source_cards import Thumbnails
from ui.answer.turn_card import TurnCard
from ui.background import Background


class TurnsView(QScrollArea):
    """Signals: source_clicked(object) — a Source whose chip or card was clicked;
    reask_requested(str, str) — question and route of a "re-ask with the other route" button;
    cloud_setup_requested() — that button where no cloud is set up; sent_requested(str) —
    what a cloud call sent, as text; edit_requested(object) — the TurnCard whose "Edit question"
    was clicked. `cloud_set_up`: whether a cloud route exists (the cards begun from now on offer
    a re-ask there). A retry or re-ask of the newest question is another version in its card
    (`again`), as a kept conversation shows its versions again (`replay`)."""

    source_clicked = Signal(object)
    reask_requested = Signal(str, str)
    cloud_setup_requested = Signal()
    sent_requested = Signal(str)
    edit_requested = Signal(object)

    def __init__(self, thumbnails: Thumbnails, background: Background) -> None:
        super().__init__()
        self.thumbnails = thumbnails
        self.background = background
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAccessibleName(self.tr("Conversation"))
        self.cards: list[TurnCard] = []
        self.cloud_set_up = True
        page = QWidget()
        self._column = QVBoxLayout(page)
        self._column.setContentsMargins(12, 12, 12, 12)
        self._column.setSpacing(12)
        self._column.addStretch(1)
        self.setWidget(page)
        self._following = True  # at the bottom: keep the newest text in view
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(lambda value: setattr(self, "_following", value >= bar.maximum()))
        bar.rangeChanged.connect(self._follow)
        application = QApplication.instance()
        assert isinstance(application, QApplication)
        application.focusChanged.connect(self._focus_moved)

    @property
    def current(self) -> TurnCard | None:
        return self.cards[-1] if self.cards else None

    def begin(self, question: str) -> TurnCard:
        card = TurnCard(question, self.thumbnails, self.background)
        card.source_clicked.connect(self.source_clicked)
        card.reask_requested.connect(self.reask_requested)
        card.cloud_setup_requested.connect(self.cloud_setup_requested)
        card.cloud_set_up = self.cloud_set_up
        card.sent_requested.connect(self.sent_requested)
        card.edit_requested.connect(lambda: self.edit_requested.emit(card))
        self._column.insertWidget(len(self.cards), card)
        self.cards.append(card)
        self._mark_latest()
        self._following = True
        card.begin()
        self.order_focus()
        return card

    def again(self) -> TurnCard:
        """The newest question asked again: its card begins another version of the answer."""
        card = self.cards[-1]
        card.begin_version()
        self._following = True
        self.order_focus()
        return card

    def apply(self, event: AnswerEvent) -> None:
        if self.current is not None:
            self.current.apply(event)
            if isinstance(event, Finished):  # its source cards are new
                self.order_focus()

    def order_focus(self) -> None:
        """Tab goes through the cards in reading order, right after the conversation itself
        (so right before the question box): widgets made later would join the end of the
        window's focus chain, after the sidebar."""
        chain = [self, *(widget for card in self.cards for widget in card.focus_order())]
        for before, after in pairwise(chain):
            QWidget.setTabOrder(before, after)

    def clear(self) -> None:
        """Start afresh (a new conversation)."""
        self.drop_from(0)

    def drop_from(self, index: int) -> int | None:
        """Remove the cards from `index` on (an edited question replaces its turn and those
        after it); the first of their recorded answers (a history id), None if none was."""
        dropped, self.cards = self.cards[index:], self.cards[:index]
        for card in dropped:
            self._column.removeWidget(card)
            card.deleteLater()
        self._mark_latest()
        recorded = [history_id for card in dropped for history_id in card.history_ids()]
        return min(recorded) if recorded else None

    def _mark_latest(self) -> None:
        for card in self.cards:
            card.mark_latest(card is self.current)

    def _focus_moved(self, _old: QWidget | None, _new: QWidget | None) -> None:
        for card in self.cards:
            card.show_actions()

    def replay(self, entries: Sequence[HistoryEntry]) -> None:
        """A kept conversation's recorded answers, with their sources and badges: a question's
        versions in one card, showing the one the conversation kept."""
        self.clear()
        for turn in replayed(entries):
            card = self.begin(turn.question)
            for at, events in enumerate(turn.versions):
                if at:
                    card.begin_version()
                for event in events:
                    card.apply(event)
            card.show_version(turn.shown)
        self.order_focus()

    def cited_sources(self) -> list[Source]:
        """Every source shown under an answer shown, oldest first."""
        return [card.source for turn in self.cards for card in turn.sources.cards]

    def text(self) -> str:
        """The conversation as text: each question, then its answer."""
        return "\n\n".join(card.text() for card in self.cards)

    def _follow(self, _minimum: int, maximum: int) -> None:
        if self._following:
            self.verticalScrollBar().setValue(maximum)
