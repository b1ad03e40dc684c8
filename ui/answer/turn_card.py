"""One turn of the conversation as a card: the question, the answer streaming in then rendered
as inert Markdown with its [n] markers as citation chips (the passage on hover, the page on
click), the route badge, the sources as cards, and the actions: copy the answer (Markdown with
its sources), retry on the same route, re-ask on the other, what was sent; on the question line,
edit it and copy it. An older card shows its actions on hover or focus, the newest always.

Nothing from a document or a model is ever rendered as HTML, loaded or made a link
(ui/plain.py): the chips are Docent's own links, carrying a secret of this card, so text that
imitates one cannot trigger anything.
"""

from __future__ import annotations

import itertools
import re
import secrets
from dataclasses import replace
from html import escape

from PySide6.QtCore import QEvent, QRegularExpression, QSize, Qt, QUrl, Signal
from PySide6.QtGui import (
    QCursor,
    QEnterEvent,
    QGuiApplication,
    QResizeEvent,
    QShortcut,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from app.answering import (
    AnswerEvent,
    Failed,
    Finished,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
    Token,
    Waiting,
)
from app.answering.citations import (
    UNVERIFIED,
    claims_citing,
    keyword_terms_all,
    supporting_sentences,
)
from app.answering.export import answer_markdown
from app.cjk import CJK_RUN
from app.llm.engine import Message
from ui import keys
from ui.answer.route_badge import RouteBadge
from ui.answer.source_cards import SourceCards, Thumbnails
from ui.background import Background
from ui.plain import insert_markdown, plain_label, plain_tooltip
from ui.theme import (
    ANSWER_SCALE,
    citation_chip_colours,
    error_colour,
    line_height,
    muted_colour,
    scaled,
)

# Below this width a card shows one answer at a time: two columns would be too narrow to read.
COMPARE_WIDTH = 760
_MARKER = QRegularExpression(r"\[(\d{1,3})\]")  # a citation marker, the model's or Docent's
# The core's flag on a sentence stating a fact no passage states (citations.UNVERIFIED).
_UNVERIFIED = QRegularExpression(rf"\[{UNVERIFIED}: ([^\]]*)\]")


def other_route(route: str) -> str:
    return "local" if route == "cloud" else "cloud"


def sent_as_text(messages: tuple[Message, ...]) -> str:
    return "\n\n".join(f"── {m.role} ──\n{m.content}" for m in messages)


class AnswerView(QTextBrowser):
    """The answer's text, as tall as its content (the conversation scrolls, not each answer)."""

    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFont(scaled(self.font(), ANSWER_SCALE))
        self.document().setDocumentMargin(0)  # the answer lines up with its question
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.viewport().setAutoFillBackground(False)
        self._fit()

    def set_line_height(self, percent: int) -> None:
        """Space the answer's lines (blocks added later, as text streams in, inherit it)."""
        spacing = QTextBlockFormat()
        spacing.setLineHeight(percent, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
        cursor = QTextCursor(self.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeBlockFormat(spacing)

    def _fit(self) -> None:
        margins = self.contentsMargins()
        height = round(self.document().size().height()) + margins.top() + margins.bottom()
        self.setFixedHeight(max(height, self.fontMetrics().height() + 8))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())


def _action(glyph: str, name: str) -> QToolButton:
    """A flat icon button of the action rows: a glyph (the style's icons are drawn for a light
    palette), its name as tooltip and for screen readers."""
    button = QToolButton()
    button.setText(glyph)
    button.setAutoRaise(True)
    button.setToolTip(name)
    button.setAccessibleName(name)
    button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # Tab reaches it (a tool button's is Tab)
    return button


class AnswerVersion(QWidget):
    """One answer to the card's question (a card holds one per retry or re-ask: its versions):
    the waiting line, the text, its route badge and its sources.

    Signals: source_clicked(object) — a Source, from a citation chip or a source card;
    ended() — the answer finished or failed (its route and actions are known)."""

    source_clicked = Signal(object)
    ended = Signal()

    def __init__(self, question: str, thumbnails: Thumbnails, background: Background) -> None:
        super().__init__()
        self.answer = AnswerView()
        self.answer.set_line_height(line_height(question))  # until the answer's own text shows
        self.answer.setAccessibleName(self.tr("Answer"))
        self.answer.anchorClicked.connect(self._open_chip)
        self.answer.highlighted.connect(self._show_passage)
        self.waiting = plain_label()  # what the core is doing until the first token
        self.waiting.setWordWrap(True)
        self.waiting.setAccessibleName(self.tr("Progress"))
        self.waiting.hide()
        self.badge = RouteBadge(question)
        self.sources = SourceCards(thumbnails, background)
        self.sources.source_clicked.connect(self.source_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.waiting)
        layout.addWidget(self.answer)
        layout.addWidget(self.badge)
        layout.addWidget(self.sources)
        self._secret = secrets.token_urlsafe(16)
        self._found: dict[int, Source] = {}  # every source offered to the model, by number
        self._chips: dict[str, Source] = {}
        self._claims: dict[int, list[str]] = {}  # the answer's sentences citing each source
        self.sent: tuple[Message, ...] | None = None
        self._streamed = False
        self.answer_text = ""  # as the model wrote it, with its [n] markers: what Copy copies
        self.cited_sources: tuple[Source, ...] = ()
        self.history_id: int | None = None
        self.route = ""  # the route it took, once finished ("" until then, or failed)

    def begin(self) -> None:
        self.badge.begin()
        self._wait(self.tr("Searching your documents…"))

    def apply(self, event: AnswerEvent) -> None:
        self.badge.apply(event)
        self._show_waiting(event)
        match event:
            case SourcesFound(sources=sources):
                self._found = {source.number: source for source in sources}
            case RouteDecided(route=route, reason=reason):
                if self._streamed:  # a cascade: the draft is being replaced
                    self._write(
                        "\n"
                        + self.tr("[{reason}; asking the {route} route]").format(
                            reason=reason, route=route
                        )
                        + "\n"
                    )
                    self._streamed = False
            case Token(text=text):
                self._streamed = True
                self._write(text)
            case Finished(
                answer=answer,
                citations=citations,
                metrics=metrics,
                history_id=history_id,
                cancelled=cancelled,
                sent=sent,
            ):
                self.history_id = history_id
                self._render(answer)
                if cancelled:
                    self._write(" " + self.tr("[stopped]"))
                self.answer_text = answer
                self.cited_sources = citations
                self.sources.show_sources([self._cited(source) for source in citations])
                self.route = metrics.route
                self.sent = sent
                self.ended.emit()
            case Failed(error=error, history_id=history_id):
                self.history_id = history_id  # no retry: the window puts the question back
                self._write("\n" + self.tr("[failed: {error}]").format(error=error))
                style = QTextCharFormat()
                style.setForeground(error_colour(self.palette()))
                cursor = self.answer.textCursor()
                cursor.select(QTextCursor.SelectionType.Document)
                cursor.mergeCharFormat(style)
                self.ended.emit()

    def markdown(self) -> str:
        """The answer as Markdown with its sources (what Copy copies)."""
        sources = [{"number": s.number, "where": s.where} for s in self.cited_sources]
        return answer_markdown(self.answer_text, sources)

    def _show_waiting(self, event: AnswerEvent) -> None:
        """Until the first token: what the core is doing, in its events' order, so the wait
        never looks idle; any text (or the end) replaces it with the answer."""
        match event:
            case SourcesFound(sources=sources):
                passages = len(sources)
                documents = len({source.document_id for source in sources})
                self._wait(
                    self.tr("Found no passages in your documents")
                    if not passages
                    else self.tr("Found {passages} in {documents}").format(
                        passages=self.tr("1 passage")
                        if passages == 1
                        else self.tr("{n} passages").format(n=passages),
                        documents=self.tr("1 document")
                        if documents == 1
                        else self.tr("{n} documents").format(n=documents),
                    )
                )
            case RouteDecided(route=route, model=model):
                self._wait(
                    self.tr("Reading them on this computer…")
                    if route == "local"
                    else self.tr("Taking an earlier answer…")
                    if route == "cache"
                    else self.tr("Asking {model}…").format(model=model)
                )
            case Waiting(ahead=ahead):
                self._wait(
                    self.tr("Waiting: 1 answer ahead")
                    if ahead == 1
                    else self.tr("Waiting: {n} answers ahead").format(n=ahead)
                )
            case Status(text=text):
                self._wait(text)
            case Token() | Finished() | Failed():
                self.waiting.hide()
                self.answer.show()

    def _wait(self, text: str) -> None:
        if self._streamed:  # a cascade's draft, or a server's status mid-answer: text stays
            return
        self.waiting.setText(text)
        self.waiting.setStyleSheet(f"color: {muted_colour(self.palette()).name()}")
        self.waiting.show()
        self.answer.hide()  # empty until the first token: the waiting line stands in for it

    def focus_order(self) -> list[QWidget]:
        return [self.answer, self.badge, self.badge.set_up, *self.sources.cards]

    def chips(self) -> dict[str, Source]:
        return dict(self._chips)

    def _write(self, text: str) -> None:
        cursor = self.answer.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, QTextCharFormat())  # plain text only, never a link
        self.answer.setTextCursor(cursor)

    def _render(self, answer: str) -> None:
        """Replace the streamed text with its inert Markdown rendering, then make each [n]
        that names a source given to the model a chip, and each unverified flag a warning."""
        self.answer.clear()
        insert_markdown(self.answer.textCursor(), answer)
        self.answer.set_line_height(line_height(answer))
        # Each source as this answer cites it: with the sentences of it the answer rests on.
        self._claims = {number: claims_citing(answer, number) for number in self._found}
        self._found = {
            number: replace(source, used=supporting_sentences(source.text, self._claims[number]))
            for number, source in self._found.items()
        }
        document = self.answer.document()
        chip = QTextCharFormat()
        chip.setAnchor(True)
        cursor = QTextCursor(document)
        while not (cursor := document.find(_MARKER, cursor)).isNull():
            source = self._found.get(int(cursor.selectedText()[1:-1]))
            if source is None:
                continue  # a number the model made up stays text
            href = f"docent-chip:{self._secret}/{len(self._chips)}"
            self._chips[href] = source
            chip.setAnchorHref(href)
            cursor.mergeCharFormat(chip)
        self._colour_chips()
        flag = QTextCharFormat()
        flag.setForeground(error_colour(self.palette()))
        cursor = QTextCursor(document)
        while not (cursor := document.find(_UNVERIFIED, cursor)).isNull():
            facts = cursor.selectedText()[len(UNVERIFIED) + 3 : -1]
            flag.setToolTip(
                plain_tooltip(
                    self.tr(
                        "No passage given to the model states {facts}: the model may have "
                        "made this up. Check it before relying on it."
                    ).format(facts=facts)
                )
            )
            cursor.mergeCharFormat(flag)

    def _cited(self, source: Source) -> Source:
        return self._found.get(source.number, source)

    def _colour_chips(self) -> None:
        """A chip: semibold, in the highlight's colour on a tint of it (AA in light and dark),
        where solid highlight made it look like selected text."""
        foreground, background = citation_chip_colours(self.palette())
        colours = QTextCharFormat()
        colours.setForeground(foreground)
        colours.setBackground(background)
        colours.setFontWeight(600)
        for start, end in _chip_spans(self.answer.document(), self._chips):
            cursor = QTextCursor(self.answer.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(colours)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._chips:
            self._colour_chips()  # a dark desktop: the chips follow

    def _open_chip(self, url: QUrl) -> None:
        if (source := self._chips.get(url.toString())) is not None:
            self.source_clicked.emit(source)

    def _show_passage(self, url: QUrl) -> None:
        """Hovering a chip shows where its passage is, the sentences of it the answer used (the
        whole passage where none stands out), and how to open it."""
        if (source := self._chips.get(url.toString())) is None:
            QToolTip.hideText()
            return
        quoted = " ".join(source.used) or source.text
        how = self.tr("Click, or Tab to it and press Enter, to open the page.")
        shared = set(keyword_terms_all(" ".join(self._claims.get(source.number, ()))))
        tip = (
            "<p style='white-space:pre-wrap'>"
            f"{escape(source.where)}\n\n{_emphasised(quoted, shared)}\n\n{escape(how)}</p>"
        )
        QToolTip.showText(QCursor.pos(), tip, self.answer)


class TurnCard(QFrame):
    """Signals: source_clicked(object) — a Source, from a citation chip or a source card;
    reask_requested(str, str) — the question and a route: the other one (re-ask) or the same
    (retry); cloud_setup_requested() — the re-ask button, where the other route is a cloud none
    is set up for, or the badge's link under a question that looked hard; sent_requested(str) —
    what a cloud call sent, as text; edit_requested() — "Edit question"; version_shown(int) —
    the index of the version now shown.

    A retry or re-ask of the newest question is another version of its answer, in the same
    card: "Answer 2 of 2 ‹ ›" (Alt+Left, Alt+Right) switches between them, each with its own
    badge and sources; a card wide enough compares two side by side (a local and a cloud one
    where it has both). The actions act on the version shown.

    `cloud_set_up`: whether a cloud route exists; without one the card never offers a re-ask
    (or a retry) that can only fail, but the way to set one up. `history_id`: the recorded
    answer it shows (None until recorded). `latest`: the newest card shows its actions always,
    and only it offers a retry or a re-ask (an older question's next turns rest on the version
    they continued)."""

    source_clicked = Signal(object)
    reask_requested = Signal(str, str)
    cloud_setup_requested = Signal()
    sent_requested = Signal(str)
    edit_requested = Signal()
    version_shown = Signal(int)

    def __init__(self, question: str, thumbnails: Thumbnails, background: Background) -> None:
        super().__init__()
        self.setObjectName("turnCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.question = question
        self.versions: list[AnswerVersion] = []
        self.shown = 0  # the version shown (its index)
        self._thumbnails = thumbnails
        self._background = background
        self.asked = plain_label(question)
        self.asked.setWordWrap(True)
        self.asked.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = self.asked.font()
        font.setBold(True)
        self.asked.setFont(font)
        self.asked.setAccessibleName(self.tr("Question"))
        self.edit_question = _action("✎", self.tr("Edit question"))
        self.edit_question.clicked.connect(self.edit_requested)
        self.copy_question = _action("❐", self.tr("Copy question"))
        self.copy_question.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.question)
        )
        question_actions = QWidget()
        question_row = QHBoxLayout(question_actions)
        question_row.setContentsMargins(0, 0, 0, 0)
        question_row.setSpacing(0)
        question_row.addWidget(self.edit_question)
        question_row.addWidget(self.copy_question)
        asked_line = QHBoxLayout()
        asked_line.addWidget(self.asked, 1)
        asked_line.addWidget(question_actions, 0, Qt.AlignmentFlag.AlignTop)
        # The versions' switcher: shown once the question has been answered twice.
        self.previous_version = _action("‹", self.tr("Previous answer"))
        self.previous_version.clicked.connect(lambda: self.show_version(self.shown - 1))
        self.next_version = _action("›", self.tr("Next answer"))
        self.next_version.clicked.connect(lambda: self.show_version(self.shown + 1))
        self.version_label = plain_label()
        self.compare = QToolButton()
        self.compare.setText(self.tr("Compare"))
        self.compare.setToolTip(self.tr("Show two answers side by side"))
        self.compare.setCheckable(True)
        self.compare.setAutoRaise(True)
        self.compare.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.compare.toggled.connect(lambda _on: self._arrange())
        self.switcher = QWidget()
        switcher_row = QHBoxLayout(self.switcher)
        switcher_row.setContentsMargins(0, 0, 0, 0)
        switcher_row.setSpacing(2)
        switcher_row.addWidget(self.previous_version)
        switcher_row.addWidget(self.version_label)
        switcher_row.addWidget(self.next_version)
        switcher_row.addStretch(1)
        switcher_row.addWidget(self.compare)
        self.switcher.hide()
        for key, step in ((keys.PREVIOUS_ANSWER, -1), (keys.NEXT_ANSWER, 1)):
            shortcut = QShortcut(keys.sequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(lambda step=step: self.show_version(self.shown + step))
        self._versions_row = QHBoxLayout()
        self._versions_row.setContentsMargins(0, 0, 0, 0)
        self._versions_row.setSpacing(16)
        self.copy_answer = _action("❐", self.tr("Copy answer with its sources"))
        self.copy_answer.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.version.markdown())
        )
        self.copy_answer.hide()
        self.retry = _action("↻", self.tr("Retry"))
        self.retry.clicked.connect(self._retry_clicked)
        self.retry.hide()
        self.reask = QPushButton()
        self.reask.setFlat(True)
        self.reask.hide()
        self.what_was_sent = QPushButton(self.tr("⇪ What was sent to the cloud"))
        self.what_was_sent.setFlat(True)
        self.what_was_sent.hide()
        answer_actions = QWidget()
        actions = QHBoxLayout(answer_actions)
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.copy_answer)
        actions.addWidget(self.retry)
        actions.addWidget(self.reask)
        actions.addWidget(self.what_was_sent)
        actions.addStretch(1)
        # Shown on hover or focus on an older card; hidden, they keep their room (no jumps).
        self._action_rows = (question_actions, answer_actions)
        for row in self._action_rows:
            policy = row.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            row.setSizePolicy(policy)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.addLayout(asked_line)
        layout.addWidget(self.switcher)
        layout.addLayout(self._versions_row)
        layout.addWidget(answer_actions)
        self._reask_route = ""
        self._retry_route = ""
        self.cloud_set_up = True
        self.latest = True
        self.reask.clicked.connect(self._reask_clicked)
        self.what_was_sent.clicked.connect(
            lambda: self.sent_requested.emit(sent_as_text(self.version.sent or ()))
        )
        self._add_version()

    # --- the version shown (what the card's parts and actions are) --------------------------

    @property
    def version(self) -> AnswerVersion:
        return self.versions[self.shown]

    @property
    def answer(self) -> AnswerView:
        return self.version.answer

    @property
    def waiting(self) -> QLabel:
        return self.version.waiting

    @property
    def badge(self) -> RouteBadge:
        return self.version.badge

    @property
    def sources(self) -> SourceCards:
        return self.version.sources

    @property
    def history_id(self) -> int | None:
        return self.version.history_id

    def history_ids(self) -> list[int]:
        """Every version's recorded answer, oldest first."""
        return [v.history_id for v in self.versions if v.history_id is not None]

    def _add_version(self) -> AnswerVersion:
        version = AnswerVersion(self.question, self._thumbnails, self._background)
        version.source_clicked.connect(self.source_clicked)
        version.badge.sent_requested.connect(self.what_was_sent.click)
        version.badge.cloud_setup_requested.connect(self.cloud_setup_requested)
        version.ended.connect(lambda: self._version_ended(version))
        self.versions.append(version)
        self._versions_row.addWidget(version, 1)
        return version

    def begin(self) -> None:
        self.versions[-1].begin()
        self._arrange()

    def begin_version(self) -> None:
        """Another answer to the question (a retry or re-ask): the next version, shown."""
        self._add_version()
        self.shown = len(self.versions) - 1
        self.compare.setChecked(False)
        self.begin()

    def apply(self, event: AnswerEvent) -> None:
        """The event of the answer being written: the newest version's."""
        self.versions[-1].apply(event)

    def show_version(self, index: int) -> None:
        if not 0 <= index < len(self.versions) or index == self.shown:
            return
        focus = QApplication.focusWidget()
        focused = focus is not None and self.isAncestorOf(focus)
        self.shown = index
        self._arrange()
        if focused:  # a hidden widget loses the focus: the answer shown takes it
            (self.answer if self.answer.isVisible() else self).setFocus()
        self.version_shown.emit(index)

    def _version_ended(self, version: AnswerVersion) -> None:
        if version is self.version:
            self._arrange()

    def _arrange(self) -> None:
        """Show the version chosen (and, comparing, the one beside it), the switcher, and the
        actions of the version shown."""
        count = len(self.versions)
        self.switcher.setVisible(count > 1)
        self.version_label.setText(
            self.tr("Answer {n} of {count}").format(n=self.shown + 1, count=count)
        )
        self.previous_version.setEnabled(self.shown > 0)
        self.next_version.setEnabled(self.shown < count - 1)
        comparable = count > 1 and self.width() >= COMPARE_WIDTH
        self.compare.setVisible(comparable)
        beside = self._beside() if comparable and self.compare.isChecked() else None
        for at, version in enumerate(self.versions):
            version.setVisible(at in (self.shown, beside))
        shown = self.version
        finished = bool(shown.route)
        self.copy_answer.setVisible(bool(shown.answer_text.strip()))
        self.what_was_sent.setVisible(bool(shown.sent))
        if finished and self.latest:
            self._offer_routes(shown.route)
        else:
            self.retry.hide()
            self.reask.hide()

    def _beside(self) -> int:
        """The version compared with the one shown: the newest on another route, else the
        one next to it."""
        route = self.version.route
        others = [at for at, v in enumerate(self.versions) if at != self.shown]
        elsewhere = [at for at in others if self.versions[at].route not in ("", route)]
        if elsewhere:
            return elsewhere[-1]
        return self.shown - 1 if self.shown > 0 else self.shown + 1

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if len(self.versions) > 1:
            self._arrange()  # Compare comes and goes with the room for two columns

    def _offer_routes(self, route: str) -> None:
        """Retry on the route the answer took (a cached one: asked afresh on this computer),
        re-ask on the other; a cloud with none set up is never offered (it could only fail):
        re-asking there becomes setting one up."""
        self._retry_route = "cloud" if route == "cloud" else "local"
        self._reask_route = other_route(self._retry_route)
        self.retry.setVisible(self._retry_route != "cloud" or self.cloud_set_up)
        if self._needs_cloud():
            self.reask.setText(self.tr("☁ Set up a cloud model to re-ask there…"))
        elif self._reask_route == "cloud":
            self.reask.setText(self.tr("↻ Re-ask with the cloud route"))
        else:
            self.reask.setText(self.tr("↻ Re-ask on this computer"))
        self.reask.show()

    def _retry_clicked(self) -> None:
        self.reask_requested.emit(self.question, self._retry_route)

    def mark_latest(self, latest: bool) -> None:
        """Whether it is the newest card (its actions always shown, a retry offered)."""
        if latest != self.latest:
            self.latest = latest
            self._arrange()
        self.show_actions()

    def show_actions(self) -> None:
        """The action rows: always on the newest card, on an older one while it is hovered or
        holds the focus (what Tab reaches next: shown before the press moves on)."""
        focused = QApplication.focusWidget()
        shown = (
            self.latest
            or self.underMouse()
            or (focused is not None and (focused is self or self.isAncestorOf(focused)))
        )
        for row in self._action_rows:
            row.setVisible(shown)

    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        self.show_actions()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self.show_actions()

    def focus_order(self) -> list[QWidget]:
        """What Tab visits in the card, top to bottom (hidden ones are skipped by Qt)."""
        return [
            self.edit_question,
            self.copy_question,
            self.previous_version,
            self.next_version,
            self.compare,
            *(widget for version in self.versions for widget in version.focus_order()),
            self.copy_answer,
            self.retry,
            self.reask,
            self.what_was_sent,
        ]

    def chips(self) -> dict[str, Source]:
        """The shown answer's citation chips: their link and the Source each opens."""
        return self.version.chips()

    def text(self) -> str:
        """The turn as text: question, the answer shown, the sources, the badge's line."""
        sources = [f"   [{c.source.number}] {c.source.where}" for c in self.sources.cards]
        return "\n".join(
            [f"Q: {self.question}", f"A: {self.answer.toPlainText()}"]
            + (["Sources:", *sources] if sources else [])
            + [self.badge.text()]
        )

    def _needs_cloud(self) -> bool:
        return self._reask_route == "cloud" and not self.cloud_set_up

    def _reask_clicked(self) -> None:
        if self._needs_cloud():
            self.cloud_setup_requested.emit()
        else:
            self.reask_requested.emit(self.question, self._reask_route)


def _chip_spans(document: QTextDocument, chips: dict[str, Source]) -> list[tuple[int, int]]:
    """Where in `document` each of the card's chips is: (start, end) positions."""
    spans = []
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.charFormat().anchorHref() in chips:
                spans.append((fragment.position(), fragment.position() + fragment.length()))
            iterator += 1
        block = block.next()
    return spans


_WORD = re.compile(r"\w+")


def _emphasised(text: str, terms: set[str]) -> str:
    """`text` escaped for a tooltip, the words (CJK: the character pairs) it shares with the
    answer's `terms` in bold: what ties the passage to the answer, at a glance."""
    bold = [False] * len(text)
    for word in _WORD.finditer(text):
        for run in CJK_RUN.finditer(word.group()):
            for at in range(run.start(), run.end() - 1):
                if run.string[at : at + 2] in terms:
                    bold[word.start() + at] = bold[word.start() + at + 1] = True
        if word.group().casefold() in terms:
            bold[word.start() : word.end()] = [True] * len(word.group())
    pieces = []
    for strong, chars in itertools.groupby(zip(bold, text, strict=True), key=lambda p: p[0]):
        piece = escape("".join(char for _strong, char in chars))
        pieces.append(f"<b>{piece}</b>" if strong else piece)
    return "".join(pieces)
