"""A conversation: follow-up questions that lean on the earlier turns.

Two things make a follow-up answerable. Retrieval needs a standalone form of the question
("and in the Chinese edition?" alone finds nothing): a follow-up that is short, or led by a
pronoun, "and…", "why" or "which…", borrows the previous standalone question's terms. And the
prompt carries the earlier turns, verbatim as they were sent, so a follow-up's prompt literally
extends the previous prompt and answer: the local engine reuses that KV prefix and evaluates only
the new question and its new sources. Sources are numbered across the conversation: a passage an
earlier turn already sent keeps its number and is not sent again.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Sequence
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
        """From its recorded answers (a failed or stopped one is not context)."""
        return cls(conversation_id, _context(entries), tuple(entries))

    async def drop_from(self, library: Library, history_id: int) -> int:
        """Drop the recorded answer `history_id` and every later one, from the library and from
        what the next question continues (the user edits that question: its answer and those
        that leaned on it go). Returns how many were dropped."""
        if self.id is None:
            return 0
        dropped = await library.truncate_conversation(self.id, history_id)
        kept = await library.conversation(self.id)
        entries = kept.entries if kept is not None else []
        self.turns = _context(entries)
        self.entries = tuple(entries)
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


def replayed(entries: Sequence[HistoryEntry]) -> list[tuple[str, list[AnswerEvent]]]:
    """Each recorded answer as its question and the events that show it again, as they showed
    it live: the sources the conversation had by then, how retrieval read a follow-up, and its
    end (the answer with its markers, the cited sources, the metrics; or the failure)."""
    shown: dict[int, Source] = {}  # the conversation's sources, by their number
    replay = []
    for entry in entries:
        turn = entry.turn or {"sources": []}
        shown |= {source["number"]: Source(**source) for source in turn["sources"]}
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
        replay.append((entry.question, events))
    return replay


def _context(entries: Sequence[HistoryEntry]) -> list[Turn]:
    """The turns a conversation's recorded answers give its next prompt (a failed or stopped
    one has none)."""
    return [Turn.from_entry(entry) for entry in entries if entry.turn is not None]


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
