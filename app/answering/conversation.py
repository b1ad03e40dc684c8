"""A conversation: follow-up questions that lean on the earlier turns.

Two things make a follow-up answerable. Retrieval needs a standalone form of the question
("and in the Chinese edition?" alone finds nothing): a follow-up that is short, or led by a
pronoun, "and…", "why" or "which…", borrows the previous standalone question's terms. And the
prompt carries the earlier turns, verbatim as they were sent, so a follow-up's prompt literally
extends the previous prompt and answer: the local engine reuses that KV prefix and evaluates only
the new question and its new sources. Sources are numbered across the conversation: a passage an
earlier turn already sent keeps its number and is not sent again.

A question asked again right after itself (the window's Retry and "re-ask with the other
route", or the same words sent again) is another *version* of that turn, not a turn of its own:
it is asked with the turns before it as context, never with its earlier versions. Each version
is a history row; consecutive rows with the same question are one turn. The version the user
looks at when the next question is asked is the one the conversation keeps: the next prompts
carry it (its row's `turn` is marked `"kept": true`, its siblings' `false`; with no mark, the
last version that has a turn is kept).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.answering.events import (
    AnswerEvent,
    Failed,
    Finished,
    InConversation,
    Source,
    SourcesFound,
)
from app.answering.facts import facts_of
from app.answering.metrics import AnswerMetrics
from app.cjk import estimate_tokens
from app.errors import DocentError
from app.index import HistoryEntry, Library

# A follow-up this short (in words; CJK characters count as words) cannot stand alone.
SHORT_FOLLOW_UP = 5
# The previous answer's values a follow-up's search borrows: the few it named, not a list's.
MAX_REFERENTS = 3

_LEADS = re.compile(
    r"^\W*(?:and|but|also|so|or|then|what about|how about|why|which|where|whose|when|how come"
    r"|it|its|they|them|their|this|that|these|those|there|he|she|his|her|same)\b"
    r"|^\W*(?:那|那么|还有|而|为什么|为何|哪|它|它们|他|她|其|这|该|同样)",
    re.IGNORECASE,
)
_PRONOUN = re.compile(
    r"\b(?:it|its|they|them|their|this|that|these|those|there|he|she|his|her)\b"
    r"|它|他们|她们|其|这个|那个|该",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _length(question: str) -> int:
    """Words, counting each CJK character as one (Chinese has no spaces)."""
    cjk = len(_CJK.findall(question))
    return len(_CJK.sub(" ", question).split()) + cjk // 2


def standalone(question: str, previous: str | None, answered: str = "") -> str:
    """The question as retrieval should read it: itself when it stands alone (or opens the
    conversation), else the previous standalone question, the versions and identifiers the
    previous answer gave (`answered`: what "that release" names), and the question."""
    if previous is None:
        return question
    follows = (
        _length(question) <= SHORT_FOLLOW_UP
        or _LEADS.search(question) is not None
        or _PRONOUN.search(question) is not None
    )
    if not follows:
        return question
    named = sorted(facts_of(answered).values - set(previous.split()))[:MAX_REFERENTS]
    return " ".join([previous, *named, question])


@dataclass(frozen=True, slots=True)
class Turn:
    """One answered question, as its prompt carried it."""

    question: str
    standalone: str
    user: str  # the user message exactly as sent: the new sources, the question, any hint
    answer: str  # the assistant message: what the model wrote, or the decline the user read
    sources: tuple[Source, ...]  # the sources this turn sent first (conversation numbering)
    declined: bool = False

    def as_record(self) -> dict[str, Any]:
        """The history row's `turn` column (question and standalone have their own; the row's
        answer is as shown, with the citation markers Docent added: this one is as written)."""
        return {
            "user": self.user,
            "answer": self.answer,
            "sources": [asdict(source) for source in self.sources],
        }

    @classmethod
    def from_entry(cls, entry: HistoryEntry) -> Turn:
        turn = entry.turn or {}
        return cls(
            question=entry.question,
            standalone=entry.standalone or entry.question,
            user=turn["user"],
            answer=turn.get("answer", entry.answer),  # recorded before markers were added
            sources=tuple(Source(**source) for source in turn["sources"]),
            declined=entry.status == "declined",
        )


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded answer to the newest question: its history row, and the turn it gives the
    next prompt (None: it failed or was stopped, and gives none)."""

    history_id: int
    turn: Turn | None


@dataclass(frozen=True, slots=True)
class AskedTurn:
    """A question and its recorded answers (its versions, oldest first) as a front end shows
    them again: `kept` indexes the version the conversation continued (None: none of them, they
    failed or a failed one was looked at), `shown` the one to show (the kept one, else the last)."""

    question: str
    versions: tuple[HistoryEntry, ...]
    kept: int | None

    @property
    def shown(self) -> int:
        return len(self.versions) - 1 if self.kept is None else self.kept


def grouped(entries: Sequence[HistoryEntry]) -> list[AskedTurn]:
    """A conversation's recorded answers as its turns: consecutive rows with the same question
    are versions of one turn."""
    runs: list[list[HistoryEntry]] = []
    for entry in entries:
        if runs and runs[-1][0].question == entry.question:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return [AskedTurn(run[0].question, tuple(run), _kept(run)) for run in runs]


def _kept(versions: Sequence[HistoryEntry]) -> int | None:
    """The version a turn's next question continued: the one marked kept, else the last with a
    turn (a failed or stopped one has none); None when every version with a turn is marked
    not kept (the user looked at a failed one)."""
    candidates = [
        at
        for at, entry in enumerate(versions)
        if entry.turn is not None and entry.turn.get("kept", True) is not False
    ]
    return candidates[-1] if candidates else None


@dataclass(frozen=True, slots=True)
class Plan:
    """What a question's prompt holds besides the system message and its own user message."""

    kept: tuple[Turn, ...]  # the earlier turns the prompt carries, verbatim
    found: tuple[Source, ...]  # the sources retrieval chose, numbered across the conversation
    send: tuple[Source, ...]  # those this question sends (the others are in `kept`)
    visible: tuple[Source, ...]  # every source the prompt shows (what citations may name)
    dropped: int  # earlier turns left out to fit the context
    withdrawn: int = 0  # earlier turns left out: they sent a removed document's passages

    @classmethod
    def alone(cls, sources: Sequence[Source]) -> Plan:
        return cls((), tuple(sources), tuple(sources), tuple(sources), 0)


@dataclass
class Conversation:
    """The turns so far; `id` is None until its first question is recorded. `entries` are the
    recorded answers it was reopened with, failed and stopped ones too (what a front end shows
    again; `turns` are what the model is shown)."""

    id: int | None = None
    turns: list[Turn] = field(default_factory=list)
    entries: tuple[HistoryEntry, ...] = ()
    handle: str | None = None  # what an MCP client calls it (its own conversations only)
    # An MCP client's conversation the desktop goes on with: its turns are copied into a new
    # conversation at the first question, so the client never reads the user's turns.
    continues: int | None = None
    # The newest question's recorded answers (its versions), oldest first, and how many of
    # `turns` come before them (the context a version is asked with).
    newest: list[Version] = field(default_factory=list)
    _asked: str = ""  # the newest question
    kept_version: int | None = None  # the newest version looked at (None: the last)
    _before: int = 0
    _asked_count: int = 0  # questions begun (not versions): which answers still decide `newest`
    # The first question, edited away: the title follows the new one unless the user renamed it.
    _retitle: str | None = None
    _recording: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)

    async def recorded_id(self, library: Library, question: str) -> int:
        """Its row in the library, made by the first question that gets here: a second question
        asked before the first one's row exists waits for it (it made a second row)."""
        async with self._recording:
            if self.id is None:
                self.id = await library.create_conversation(question, self.handle, self.continues)
        return self.id

    @classmethod
    def from_entries(
        cls, conversation_id: int | None, entries: Sequence[HistoryEntry]
    ) -> Conversation:
        """From its recorded answers (a failed or stopped one is not context; of a turn's
        versions, the kept one is)."""
        conversation = cls(conversation_id)
        conversation._restore(entries)
        return conversation

    def _restore(self, entries: Sequence[HistoryEntry]) -> None:
        turns = grouped(entries)
        context = [
            Turn.from_entry(turn.versions[turn.kept]) for turn in turns if turn.kept is not None
        ]
        self.entries = tuple(entries)
        self.turns = context
        self.newest, self.kept_version, self._before = [], None, len(context)
        if turns:
            last = turns[-1]
            self._asked = last.question
            self._before -= last.kept is not None
            self.newest = [
                Version(entry.id, None if entry.turn is None else Turn.from_entry(entry))
                for entry in last.versions
            ]
            self.kept_version = last.versions[last.shown].id

    def asks_again(self, question: str) -> bool:
        """Whether `question` is the newest one asked again: another version of that turn."""
        return self.id is not None and bool(self.newest) and self._asked == question.strip()

    def choose(self, history_id: int) -> None:
        """The user looks at this version of the newest question: the next question continues
        it (the window says which as it asks that question). Any other id changes nothing: an
        older turn's versions are history, the turns after it rest on the one they continued."""
        for version in self.newest:
            if version.history_id == history_id:
                self.kept_version = history_id
                self.turns = self.turns[: self._before] + ([version.turn] if version.turn else [])

    async def ask(
        self,
        library: Library,
        question: str,
        answer: Callable[[Conversation], AsyncIterator[AnswerEvent]],
    ) -> AsyncIterator[AnswerEvent]:
        """`answer(conversation)`'s events for `question` as this conversation's next turn, or,
        asked again right after itself, as another version of the newest turn: `answer` is then
        given the turns before it, and the new version is the one kept. A next question first
        records which version of the newest turn it continues."""
        again = self.asks_again(question)
        if self._retitle is not None and self.id is not None:
            await library.follow_first_question(self.id, self._retitle, question)
            self._retitle = None
        if again:
            asking = Conversation(self.id, self.turns[: self._before], handle=self.handle)
        else:
            self._asked_count += 1
            await self._keep_choice(library)
            asking = self
        before, count = len(asking.turns), self._asked_count
        async for event in answer(asking):
            recorded = event.history_id if isinstance(event, Finished | Failed) else None
            # An answer stopped by a newer question ends after it began: that one is newest.
            if recorded is not None and count == self._asked_count:
                added = asking.turns[before] if len(asking.turns) > before else None
                self._answered(question.strip(), Version(recorded, added), again, before)
            yield event

    def _answered(self, question: str, version: Version, again: bool, before: int) -> None:
        if again:
            self.newest.append(version)
            self.turns = self.turns[: self._before] + ([version.turn] if version.turn else [])
        else:  # the pipeline appended its turn to `turns`
            self.newest, self._before = [version], before
            self._asked = question
        self.kept_version = None

    async def _keep_choice(self, library: Library) -> None:
        """Record which version of the newest turn the next question continues."""
        if self.id is not None and len(self.newest) > 1:
            kept = self.kept_version
            if kept is None:
                kept = self.newest[-1].history_id
            await library.keep_version(self.id, [v.history_id for v in self.newest], kept)

    async def drop_from(self, library: Library, history_id: int) -> int:
        """Drop the recorded answer `history_id` and every later one, from the library and from
        what the next question continues (the user edits that question: its answer and those
        that leaned on it go). Returns how many were dropped."""
        if self.id is None:
            return 0
        recorded = await library.conversation(self.id)
        first = recorded.entries[0] if recorded is not None and recorded.entries else None
        dropped = await library.truncate_conversation(self.id, history_id)
        kept = await library.conversation(self.id)
        entries = kept.entries if kept is not None else []
        if first is not None and history_id <= first.id:
            self._retitle = first.question  # the title was made of it (unless renamed since)
        self._restore(entries)
        return dropped

    def standalone(self, question: str) -> str:
        if not self.turns:
            return question
        last = self.turns[-1]
        return standalone(question, last.standalone, "" if last.declined else last.answer)

    def plan(
        self, chosen: Sequence[Source], room_tokens: int, present: Collection[int] | None = None
    ) -> Plan:
        """The earlier turns that fit `room_tokens` (the oldest dropped first) and the chosen
        sources renumbered across the conversation: a passage a kept turn sent keeps its number
        and is not sent again; the others are numbered after every earlier source. A turn that
        sent a passage of a document no longer in the library (not in `present`, the ids of
        those that are) is never sent again: removing a document takes its text out of every
        later prompt."""
        kept = self.turns
        if present is not None:
            kept = [t for t in kept if all(s.document_id in present for s in t.sources)]
        withdrawn = len(self.turns) - len(kept)
        while True:
            shown = {s.chunk_id: s for turn in kept for s in turn.sources}
            found = _renumber(chosen, shown, self._next_number())
            send = [s for s in found if s.chunk_id not in shown]
            cost = sum(estimate_tokens(t.user) + estimate_tokens(t.answer) + 16 for t in kept)
            cost += sum(estimate_tokens(s.text) + 16 for s in send)
            if cost <= room_tokens or not kept:
                break
            kept = kept[1:]
        visible = {**shown, **{s.chunk_id: s for s in send}}
        dropped = len(self.turns) - withdrawn - len(kept)
        return Plan(
            tuple(kept), tuple(found), tuple(send), tuple(visible.values()), dropped, withdrawn
        )

    def _next_number(self) -> int:
        return 1 + max((s.number for t in self.turns for s in t.sources), default=0)


class ConversationNotFound(DocentError):
    """No conversation has this id (deleted, or another library's)."""


async def reopen(library: Library, conversation_id: int, handle: str | None = None) -> Conversation:
    """A kept conversation, ready for its next question. An MCP client's conversation reopened
    by the desktop (no `handle`) goes on in a copy: the client's turns, none of the user's."""
    kept = await library.conversation(conversation_id)
    if kept is None:
        raise ConversationNotFound(f"there is no conversation {conversation_id}")
    if kept.client and handle is None:
        copy = Conversation.from_entries(None, kept.entries)
        copy.continues = conversation_id
        return copy
    conversation = Conversation.from_entries(conversation_id, kept.entries)
    conversation.handle = handle
    return conversation


@dataclass(frozen=True, slots=True)
class Replayed:
    """A turn shown again: its question, the events of each of its versions, the one shown."""

    question: str
    versions: tuple[tuple[AnswerEvent, ...], ...]
    shown: int


def replayed(entries: Sequence[HistoryEntry]) -> list[Replayed]:
    """Each turn of recorded answers (consecutive versions of a question are one) as its
    question and the events that show each version again, as they showed it live: the sources
    the conversation had by then (the kept versions' of the turns before, and its own), how
    retrieval read a follow-up, and its end (the answer with its markers, the cited sources,
    the metrics; or the failure)."""
    earlier: dict[int, Source] = {}  # the sources the kept turns sent, by their number
    replay = []
    for asked in grouped(entries):
        versions = []
        for entry in asked.versions:
            turn = entry.turn or {"sources": []}
            shown = earlier | {s["number"]: Source(**s) for s in turn["sources"]}
            versions.append(tuple(_shown_again(entry, shown)))
        if asked.kept is not None:
            kept = asked.versions[asked.kept].turn or {"sources": []}
            earlier |= {s["number"]: Source(**s) for s in kept["sources"]}
        replay.append(Replayed(asked.question, tuple(versions), asked.shown))
    return replay


def _shown_again(entry: HistoryEntry, shown: dict[int, Source]) -> list[AnswerEvent]:
    events: list[AnswerEvent] = [SourcesFound(tuple(shown.values()))]
    if entry.standalone and entry.conversation_id is not None:
        events.append(InConversation(entry.conversation_id, entry.standalone, 0))
    if entry.status == "failed":
        events.append(Failed(entry.error or "failed", entry.id))
    else:
        # A cached answer's turn kept no sources: its citations show in its text only.
        cited = [shown[c["number"]] for c in entry.citations if c["number"] in shown]
        metrics = AnswerMetrics.from_record(entry)
        cancelled = entry.status == "cancelled"
        events.append(
            Finished(entry.answer, tuple(cited), metrics, entry.id, cancelled, entry.grounded)
        )
    return events


def _renumber(chosen: Sequence[Source], shown: dict[int, Source], first: int) -> list[Source]:
    """The chosen sources in rank order: a shown one under its number, a new one numbered on."""
    found: list[Source] = []
    number = first
    for source in chosen:
        if (earlier := shown.get(source.chunk_id)) is not None:
            found.append(replace(source, number=earlier.number))
        else:
            found.append(replace(source, number=number))
            number += 1
    return found
