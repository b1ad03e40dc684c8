"""What an answer and a summary share, written once: the parts they run on and the engine a route
decision gets, the cited text they write (offsets, markers), the history record and its charge,
and the replay of one kept whole (the answer cache, a stored summary) without a model call.

`Answerer` (pipeline.py) and `Summarizer` (summary.py) are two planners over these: one decides
what to retrieve and how to prompt for a question, the other how to read a document in steps.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.answering.citations import Attribution, mark
from app.answering.events import (
    AnswerEvent,
    AnswerRecorded,
    Citation,
    Finished,
    RouteDecided,
    Source,
    SourcesFound,
    Token,
)
from app.answering.metrics import AnswerMetrics
from app.index import HistoryRecord, Library
from app.llm.engine import ChatEngine, GenerationDone, Message
from app.routing import Reason, RouteDecision, RoutePolicy
from app.settings import Settings

# Where a sentence ends: a Latin stop before a space or the end, or a CJK one.
_SENTENCE_STOP = re.compile(r"[.!?](?=\s|$)|[。！？]")


@dataclass(frozen=True)
class Parts:
    """The library, the engines, the router and the settings one question or summary runs on;
    `on_recorded` hears of each record (the desk charges the budget and tells its subscribers)."""

    library: Library
    local: ChatEngine
    policy: RoutePolicy
    settings: Settings
    cloud_engine: Callable[[str], ChatEngine] | None = None
    on_recorded: Callable[[AnswerRecorded], None] | None = None
    # With the local route on a model server: the model on this computer, loaded on first use,
    # that answers when the server fails before its first token.
    on_this_computer: Callable[[], Awaitable[ChatEngine]] | None = None

    def engine(self, decision: RouteDecision, on_cloud: bool) -> ChatEngine | None:
        """The engine that writes for `decision`; None when it is a cloud model and no cloud
        route is open (the caller fails with routing.NO_CLOUD)."""
        if not on_cloud:
            return self.local
        return None if self.cloud_engine is None else self.cloud_engine(decision.model)

    async def record(self, record: HistoryRecord) -> int:
        """Into the history (and its conversation, if it names one); then told."""
        history_id = await self.library.record(record)
        if self.on_recorded is not None:
            self.on_recorded(AnswerRecorded(history_id, record.conversation_id, record.cost_usd))
        return history_id


@dataclass
class CitedText:
    """Text written in one or more steps, each step's sentences attributed to its sources as they
    end (citations.py); offsets count from the start of the whole text."""

    text: str = ""
    attributions: list[Attribution] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    cited: list[Source] = field(default_factory=list)

    def write(self, text: str) -> Token:
        """Text that is not a model's (a summary's section titles)."""
        self.text += text
        return Token(text)

    def quote(self, text: str, source: Source) -> tuple[Token, Citation]:
        """`text` copied from `source` (a summary's key point): cited by it, as written."""
        self.text += text
        end = len(self.text.rstrip())
        self.attributions.append(Attribution(source.number, end, 1.0, False))
        citation = Citation(source, end, False)
        self.citations.append(citation)
        if source not in self.cited:
            self.cited.append(source)
        return Token(text), citation

    def citer(self, sources: Sequence[Source]) -> Callable[[list[Attribution]], list[Citation]]:
        """For `cited_stream`: a step's attributions (offsets in its own text, which starts
        here) as Citation events, kept."""
        by_number = {source.number: source for source in sources}
        offset = len(self.text)

        def cite(attributions: list[Attribution]) -> list[Citation]:
            moved = [replace(a, end=offset + a.end) for a in attributions]
            found = [
                Citation(by_number[a.number], a.end, a.explicit) for a in moved if not a.missing
            ]
            self.attributions += moved
            self.citations += found
            self.cited += [c.source for c in found if c.source not in self.cited]
            return found

        return cite

    def end_at_last_sentence(self, start: int) -> None:
        """The text written since `start`, cut off by its token limit, ends at its last whole
        sentence rather than mid-word (with "…" if it finished none); what it cited there goes."""
        stops = [m.end() for m in _SENTENCE_STOP.finditer(self.text, start)]
        if not stops:
            self.text = self.text.rstrip() + "…"
            return
        end = stops[-1]
        self.text = self.text[:end]
        self.attributions = [a for a in self.attributions if a.end <= end]
        self.citations = [c for c in self.citations if c.at <= end]
        self.cited = [s for s in self.cited if any(c.source == s for c in self.citations)]

    def marked(self) -> str:
        """The text as shown and recorded: stripped, each supported sentence closed by its [n]."""
        return mark(self.text, self.attributions)

    def restore(self, kept: Sequence[Sequence[Any]], sources: Sequence[Source]) -> None:
        """Attributions kept by `kept_citations`, for text already written."""
        by_number = {source.number: source for source in sources}
        for number, at, explicit, *missing in kept:
            self.attributions.append(Attribution(number, at, 1.0, explicit, tuple(missing)))
            if missing:
                continue  # an unverified sentence: flagged, not cited
            citation = Citation(by_number[number], at, explicit)
            self.citations.append(citation)
            if citation.source not in self.cited:
                self.cited.append(citation.source)

    def kept_citations(self) -> list[list[Any]]:
        """The attributions as JSON: (number, offset, explicit, the facts no passage states)."""
        return [[a.number, a.end, a.explicit, *a.missing] for a in self.attributions]


@dataclass(frozen=True, slots=True)
class Kept:
    """An answer kept whole, replayed without a model call as the route "cache"."""

    text: str  # as shown: with its citation markers
    sources: tuple[Source, ...]
    cited: tuple[Source, ...]
    model: str  # who wrote it
    grounded: float | None

    def replay(self, why: Reason, started: float) -> tuple[list[AnswerEvent], AnswerMetrics]:
        """The events that show it, and its metrics (instant and free)."""
        decision = RouteDecision("cache", self.model, why)
        events: list[AnswerEvent] = [
            SourcesFound(self.sources),
            RouteDecided(decision.route, decision.model, decision.reason, why),
            Token(self.text),
        ]
        answered = time.perf_counter()
        metrics = AnswerMetrics.measure(
            route=decision.route,
            model=decision.model,
            reason=decision.reason,
            why=why,
            started_at=started,
            retrieved_at=started,
            finished_at=answered,
            generation=GenerationDone(0, 0, "stop", answered, answered),
        )
        return events, metrics

    def finished(self, metrics: AnswerMetrics, history_id: int) -> Finished:
        return Finished(self.text, self.cited, metrics, history_id, False, self.grounded)


def history_record(
    question: str,
    scope: Sequence[int] | None,
    text: str,
    status: str,
    error: str | None,
    metrics: AnswerMetrics,
    cited: Sequence[Source],
    grounded: float | None,
    sent: Sequence[Message] | None = None,
) -> HistoryRecord:
    """What the history keeps of an answer or a summary."""
    return HistoryRecord(
        question=question,
        scope=list(scope or []),
        answer=text,
        status=status,
        error=error,
        citations=[source.as_dict() for source in cited],
        grounded=grounded,
        sent=None if sent is None else [{"role": m.role, "content": m.content} for m in sent],
        **metrics.recorded(),  # route, model, reason, timings, tokens, cost
    )
