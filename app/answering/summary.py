"""A document's summary, by map-reduce over its sections, cited by page like an answer.

Map: each section (sections.py) is summarized on its own, its pages the numbered sources of a
CitationTracker, so every sentence is cited by a page of that section. Reduce: a short overview
of the whole from the sections' summaries. After each section's sentences come its key points
(key_points.py): the section's own sentences that state the most facts the model left out, each
cited by its page. A 0.5B model asked to merge six partial summaries
into one dropped most of their facts, so the summary keeps each section's points under its title
and pages, and the overview comes last, as a reading aid rather than the only record.

The summary speaks the answer's events (SourcesFound, RouteDecided, Token, Citation, Finished,
Failed) so the CLI, the window and the MCP server render it as they render an answer, plus
SummaryProgress (step n of N). A finished summary is stored with the document's content hash:
asking again replays it without a model call, and a changed document's summary is gone with its
old version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from app.answering.citations import CitationTracker
from app.answering.conversation import Conversation
from app.answering.events import (
    AnswerEvent,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
)
from app.answering.key_points import Prominence, as_line, key_points
from app.answering.metrics import AnswerMetrics
from app.answering.run import CitedText, Kept, Parts, history_record
from app.answering.sections import Section, page_sources, select_part, split
from app.answering.streaming import Outcome, cited_stream
from app.answering.summary_request import SummaryRequest
from app.catalog import Speed
from app.cjk import estimate_tokens
from app.errors import DocentError
from app.index import DocumentInfo, HistoryRecord
from app.llm.engine import (
    CancelToken,
    ChatEngine,
    GenerationDone,
    GenerationRequest,
    Message,
)
from app.llm.speed import LONG_PROMPT_RATE
from app.routing import NO_CLOUD, Reason, RouteDecision, RouteUnavailable

# A section's summary: two or three sentences. The overview: the same.
SECTION_SUMMARY_TOKENS = 120
OVERVIEW_TOKENS = 120
# Longest section read at once. The 0.5B model keeps a section's facts in a few sentences when
# it reads a few pages; asked about 3,000 tokens at once it kept the first page's and lost the
# rest. Longer sections are cut into page windows.
SECTION_TOKENS = 1500
# The share of its longest text a step writes: 36 % on the 60-page book of the tests (302 of
# 840 tokens, bundled 0.5B model); a little more, so the estimate errs long.
WRITTEN_SHARE = 0.5
# The instruction, the section's title and the chat template around the text, in tokens.
_PROMPT_OVERHEAD = 80

_SECTION_INSTRUCTION = (
    "Summarize this section in two or three sentences. Keep the names and numbers that matter."
)
_OVERVIEW_INSTRUCTION = "In two or three sentences, say what the whole document is about."
OVERVIEW = "Overall"


@cache
def summary_prompt() -> str:
    return (
        resources.files("resources")
        .joinpath("prompts/summary_system.txt")
        .read_text(encoding="utf-8")
        .strip()
    )


class SummaryError(DocentError):
    """The document cannot be summarized (not in the library, no text, no such chapter)."""


@dataclass(frozen=True, slots=True)
class SummaryProgress:
    """Step `step` of `steps` starts: a section ("Chapter 2 (pages 11–20)") or the overview."""

    step: int
    steps: int
    what: str


SummaryEvent = AnswerEvent | SummaryProgress


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    document: DocumentInfo
    request: SummaryRequest
    sections: tuple[Section, ...]
    pages: tuple[Source, ...]  # the whole document's, whatever part is summarized

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(source for section in self.sections for source in section.sources)

    @property
    def steps(self) -> int:
        """A section each, and the overview when there are several."""
        return len(self.sections) + (len(self.sections) > 1)

    @property
    def label(self) -> str:
        """What the history and the dialog call this summary."""
        part = f", {self.request.part}" if self.request.part else ""
        return f"Summary of {self.document.name}{part}"

    @property
    def prompt_tokens(self) -> int:
        system = estimate_tokens(summary_prompt())
        sections = sum(system + s.tokens + _PROMPT_OVERHEAD for s in self.sections)
        overview = 0
        if len(self.sections) > 1:
            overview = system + _PROMPT_OVERHEAD + len(self.sections) * SECTION_SUMMARY_TOKENS
        return sections + overview

    @property
    def completion_tokens(self) -> int:
        """At most: every step writing its longest."""
        return len(self.sections) * SECTION_SUMMARY_TOKENS + (len(self.sections) > 1) * (
            OVERVIEW_TOKENS
        )


@dataclass(frozen=True, slots=True)
class RouteCost:
    model: str
    cost_usd: float | None  # None: the price table does not list the model


@dataclass(frozen=True, slots=True)
class Estimate:
    """What a summary will take, said before it starts (tokens at most; time at the measured
    local rates, None when they were never measured)."""

    steps: int
    prompt_tokens: int
    completion_tokens: int
    local_s: float | None
    cloud: tuple[RouteCost, ...]
    stored: bool  # a summary of this version is stored: opening it costs nothing

    def describe_local(self) -> str:
        if self.stored:
            return "stored: opens at once"
        if self.local_s is None:
            return "time unknown (run the speed check in Settings)"
        minutes, seconds = divmod(round(self.local_s), 60)
        return f"about {minutes} min {seconds:02d} s" if minutes else f"about {seconds} s"


def estimate(
    plan: SummaryPlan,
    speed: Speed | None,
    cloud_models: Sequence[str],
    cost: Callable[[str, int, int], float | None] | None,
    *,
    stored: bool = False,
) -> Estimate:
    """Local time from the measured prefill and decode rates (a long prompt reads at the rate a
    typical question's does, see speed.py): the system prompt is read once (its KV cache is
    reused), and a step writes about WRITTEN_SHARE of its longest. Each cloud model's `cost`,
    from the price table, is at most: every call pays for its whole prompt and longest text."""
    prompt, completion = plan.prompt_tokens, plan.completion_tokens
    local_s = None
    if speed is not None:
        read = prompt - (plan.steps - 1) * estimate_tokens(summary_prompt())
        local_s = read / (speed.prefill_tok_s * LONG_PROMPT_RATE) + (
            completion * WRITTEN_SHARE / speed.decode_tok_s
        )
    cloud = tuple(
        RouteCost(model, cost(model, prompt, completion) if cost else None)
        for model in cloud_models
    )
    return Estimate(plan.steps, prompt, completion, local_s, cloud, stored)


@dataclass
class _Run:
    """A summary being written: its text, what it cites, what it cost, and the engine that
    writes its next step."""

    decision: RouteDecision
    engine: ChatEngine
    written: CitedText = field(default_factory=CitedText)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    first_token_at: float | None = None
    decode_s: float = 0.0
    cancelled: bool = False
    error: str | None = None

    def done(self, generation: GenerationDone) -> None:
        self.prompt_tokens += generation.prompt_tokens
        self.completion_tokens += generation.completion_tokens
        if self.cost_usd is not None:
            self.cost_usd = (
                None if generation.cost_usd is None else self.cost_usd + generation.cost_usd
            )
        first, last = generation.first_token_at, generation.last_token_at
        if first is not None and last is not None:
            self.first_token_at = self.first_token_at or first
            self.decode_s += last - first
        self.cancelled = generation.finish_reason == "cancelled"

    def metrics(self, started: float, read: float) -> AnswerMetrics:
        rate = None
        if self.decode_s > 0 and self.completion_tokens > 1:
            rate = self.completion_tokens / self.decode_s
        return AnswerMetrics(
            route=self.decision.route,
            model=self.decision.model,
            reason=self.decision.reason,
            retrieval_s=read - started,
            ttft_s=None if self.first_token_at is None else self.first_token_at - started,
            total_s=time.perf_counter() - started,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            tokens_per_s=rate,
            cost_usd=self.cost_usd,
            why=self.decision.why,
        )


class Summarizer:
    """Plan a document's summary (its sections, what it will take), then write it or replay the
    stored one, over `parts` (run.py). Routes as answers do: local unless the user picks a
    cloud model, which the policy's privacy and budget rules may refuse."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.library = parts.library
        self.settings = parts.settings
        self._system = summary_prompt()

    async def plan(self, document_id: int, request: SummaryRequest | None = None) -> SummaryPlan:
        """The sections to read; `request` names a chapter (None: the whole document)."""
        request = request or SummaryRequest()
        document = await self.library.document(document_id)
        if document is None:
            raise SummaryError(f"document {document_id} is not in the library")
        chunks = await self.library.document_chunks(document_id)
        if not chunks:
            raise SummaryError(f"{document.name} has no text to summarize")
        pages = page_sources(chunks)
        sections = split(pages, self._section_budget())
        if request.chapter is not None or request.title:
            sections = select_part(sections, request.chapter, request.title)
        return SummaryPlan(document, request, tuple(sections), tuple(pages))

    def _section_budget(self) -> int:
        """What fits the local model's context beside the prompt and the summary it writes."""
        room = (
            self.settings.local.n_ctx
            - estimate_tokens(self._system)
            - _PROMPT_OVERHEAD
            - SECTION_SUMMARY_TOKENS
        )
        return max(256, min(SECTION_TOKENS, room))

    async def is_stored(self, plan: SummaryPlan) -> bool:
        return await self._stored(plan) is not None

    async def _stored(self, plan: SummaryPlan) -> dict[str, object] | None:
        raw = await self.library.stored_summary(plan.document, plan.request.part)
        return None if raw is None else dict(json.loads(raw))

    async def answer(
        self,
        request: SummaryRequest,
        question: str,
        scope: Sequence[int] | None,
        cancel: CancelToken,
        route: str | None,
        conversation: Conversation | None = None,
    ) -> AsyncIterator[AnswerEvent]:
        """A question that asks for a summary: of the one document in scope (or in the
        library), as an answer's events; each step's start is a Status. In a `conversation`
        it is recorded as one of its turns (shown when it is reopened; not the model's context
        for the next question: a summary is too long for the prompt)."""
        if scope is None:
            documents = [d.id for d in await self.library.documents()]
        else:
            documents = list(dict.fromkeys(scope))
        if len(documents) != 1:
            yield Failed(
                "Which document? Choose the one to summarize (tick it, or pass --doc)."
                if documents
                else "No documents are indexed yet: add some first.",
                None,
            )
            return
        try:
            plan = await self.plan(documents[0], request)
        except DocentError as error:
            yield Failed(str(error), None)
            return
        joined: int | None = None
        if conversation is not None:
            joined = await conversation.recorded_id(self.library, question)
            yield InConversation(joined, question, 0)
        async for event in self.summarize(plan, cancel, route, question, conversation_id=joined):
            if isinstance(event, SummaryProgress):
                yield Status(f"summarizing {event.step} of {event.steps}: {event.what}")
            else:
                yield event

    async def summarize(
        self,
        plan: SummaryPlan,
        cancel: CancelToken | None = None,
        route: str | None = None,
        question: str | None = None,
        model: str | None = None,
        *,
        conversation_id: int | None = None,
        replace_stored: bool = True,
    ) -> AsyncIterator[SummaryEvent]:
        """`route` "local" or "cloud" (None: the stored summary, else the local model), `model`
        the cloud model the user picked (None: the router's); `question` is what the user
        asked, when a question asked for the summary, in the conversation `conversation_id`.
        A finished summary is stored, replacing the one kept unless `replace_stored` is False
        (one made for an MCP client)."""
        cancel = cancel or CancelToken()
        started = time.perf_counter()
        question = question or plan.label
        if route is None and (stored := await self._stored(plan)) is not None:
            async for event in self._replay(plan, question, stored, started, conversation_id):
                yield event
            return
        try:
            decision = self._decide(question, route)
            if decision.route == "cloud" and model is not None:
                decision = dataclasses.replace(decision, model=model)
        except RouteUnavailable as unavailable:
            yield Failed(str(unavailable), None)
            return
        read = time.perf_counter()
        sources = plan.sources
        yield SourcesFound(sources)
        yield RouteDecided(decision.route, decision.model, decision.reason, decision.why)
        engine = self.parts.engine(decision, decision.route == "cloud")
        if engine is None:
            yield Failed(NO_CLOUD, None)
            return
        run = _Run(decision, engine)
        names = decision.route != "cloud" or self.settings.routing.privacy == "standard"
        # Read off the event loop, the window's (0.1 s for a 360-page manual here), and only
        # when a summary is written: not for its estimate, nor a stored one's replay.
        prominence = await asyncio.to_thread(Prominence.of, plan.pages)
        several = len(plan.sections) > 1
        partials: list[str] = []
        for step, section in enumerate(plan.sections, start=1):
            yield SummaryProgress(step, plan.steps, section.title)
            if several:
                # Two spaces: a Markdown line break, so the window shows the title on its own line.
                yield run.written.write(f"{section.title}  \n")
            start = len(run.written.text)  # the partial summary alone: titles and pages stay here
            messages = self._section_messages(section, names)
            async for event in self._step(run, messages, cancel, section.sources):
                yield event
            partials.append(run.written.text[start:].strip())
            if run.cancelled or run.error:
                break
            for event in self._quote_key_points(run, section, partials[-1], prominence):
                yield event
            if several:
                yield run.written.write("\n\n")
        if several and not (run.cancelled or run.error):
            yield SummaryProgress(plan.steps, plan.steps, "overview")
            yield run.written.write(f"{OVERVIEW}: ")
            messages = self._overview_messages(partials)
            async for event in self._step(run, messages, cancel, sources, OVERVIEW_TOKENS):
                yield event
        finishing = self._finish(
            plan, question, run, started, read, conversation_id, replace_stored
        )
        async for event in finishing:
            yield event

    def _quote_key_points(
        self, run: _Run, section: Section, said: str, prominence: Prominence
    ) -> Iterator[AnswerEvent]:
        points = key_points(section.sources, said, prominence)
        if points:
            yield run.written.write("\n\n")  # a paragraph, then the list
        for point in points:
            yield from run.written.quote(as_line(point), point.source)

    def _decide(self, question: str, route: str | None) -> RouteDecision:
        if route == "cloud":
            return self.parts.policy.decide(question, [], "cloud")
        if route == "local":
            return self.parts.policy.decide(question, [], "local")
        # With a model server (the local route's), the summary is written there, not here.
        on_server = self.parts.on_this_computer is not None
        why = Reason("summary_server" if on_server else "summary_local")
        return RouteDecision("local", self.parts.local.model, why)

    def _section_messages(self, section: Section, names: bool) -> list[Message]:
        if names:  # privacy "excerpts" (cloud): the text alone, no titles or page numbers
            pages = [f"Page {s.page_label}:\n{s.text}" for s in section.sources]
            user = f"Section: {section.title}\n\n" + "\n\n".join(pages)
        else:
            user = "Text:\n\n" + "\n\n".join(s.text for s in section.sources)
        return [
            Message("system", self._system),
            Message("user", f"{user}\n\n{_SECTION_INSTRUCTION}"),
        ]

    def _overview_messages(self, partials: Sequence[str]) -> list[Message]:
        body = "\n\n".join(partials)
        return [
            Message("system", self._system),
            Message(
                "user",
                f"Summaries of the document's sections:\n\n{body}\n\n{_OVERVIEW_INSTRUCTION}",
            ),
        ]

    async def _step(
        self,
        run: _Run,
        messages: Sequence[Message],
        cancel: CancelToken,
        sources: Sequence[Source],
        max_tokens: int = SECTION_SUMMARY_TOKENS,
    ) -> AsyncIterator[AnswerEvent]:
        """One step's text; where the model server (the local route's) fails before its first
        token, the model on this computer writes it and the steps after it, and the route
        shows the fall-back and why, as an answer's does."""
        start = len(run.written.text)
        async for event in self._generate(run, messages, cancel, sources, max_tokens):
            yield event
        if run.error is None or len(run.written.text) > start:
            return
        on_this_computer = await self._on_this_computer(run)
        if on_this_computer is None:
            return
        why = Reason("server_failed", {"error": run.error})
        run.decision = RouteDecision("fallback", on_this_computer.model, why)
        run.engine, run.error = on_this_computer, None
        yield RouteDecided(run.decision.route, run.decision.model, run.decision.reason, why)
        async for event in self._generate(run, messages, cancel, sources, max_tokens):
            yield event

    async def _on_this_computer(self, run: _Run) -> ChatEngine | None:
        """The model on this computer, where the step that failed ran on the model server and
        that model loads; else None (the server's error is the summary's)."""
        if run.decision.route != "local" or self.parts.on_this_computer is None:
            return None
        try:
            return await self.parts.on_this_computer()
        except DocentError:
            return None

    async def _generate(
        self,
        run: _Run,
        messages: Sequence[Message],
        cancel: CancelToken,
        sources: Sequence[Source],
        max_tokens: int,
    ) -> AsyncIterator[AnswerEvent]:
        """One step's text, its sentences cited by `sources` (offsets in the whole summary)."""
        request = GenerationRequest(messages, max_tokens, self.settings.local.temperature)
        outcome = Outcome()
        start = len(run.written.text)
        tracker = CitationTracker(sources)
        async for event in cited_stream(
            run.engine, request, cancel, tracker, run.written, sources, outcome
        ):
            yield event
        if outcome.generation is not None:
            run.done(outcome.generation)
            if outcome.generation.finish_reason == "length":  # the overview's 120 tokens
                run.written.end_at_last_sentence(start)
        run.error = run.error or outcome.error

    async def _finish(
        self,
        plan: SummaryPlan,
        question: str,
        run: _Run,
        started: float,
        read: float,
        conversation_id: int | None,
        replace_stored: bool,
    ) -> AsyncIterator[SummaryEvent]:
        summary = run.written.marked()
        metrics = run.metrics(started, read)
        status = "failed" if run.error else "cancelled" if run.cancelled else "finished"
        cited = run.written.cited
        grounded = _grounded(run.written)
        record = history_record(
            question, [plan.document.id], summary, status, run.error, metrics, cited, None
        )
        history_id = await self._record(record, conversation_id)
        if run.error:
            yield Failed(run.error, history_id)
            return
        if status == "finished":
            stored = json.dumps(
                {
                    "summary": summary,
                    "text": run.written.text,  # as written: what the citation offsets count in
                    "sources": [dataclasses.asdict(s) for s in plan.sources],
                    "citations": run.written.kept_citations(),
                    "model": run.decision.model,
                },
                ensure_ascii=False,
            )
            await self.library.keep_summary(
                plan.document, plan.request.part, stored, replace=replace_stored
            )
        yield Finished(summary, tuple(cited), metrics, history_id, run.cancelled, grounded)

    async def _replay(
        self,
        plan: SummaryPlan,
        question: str,
        stored: dict[str, object],
        started: float,
        conversation_id: int | None,
    ) -> AsyncIterator[SummaryEvent]:
        """The stored summary, whole, without a model call (its markers placed again from the
        kept citations: a summary stored before markers were written gets them too)."""
        sources = tuple(Source(**raw) for raw in stored["sources"])  # type: ignore[attr-defined]
        written = CitedText(str(stored.get("text", stored["summary"])))
        written.restore(stored["citations"], sources)  # type: ignore[arg-type]
        summary = written.marked() if "text" in stored else str(stored["summary"])
        kept = Kept(summary, sources, tuple(written.cited), str(stored["model"]), None)
        events, metrics = kept.replay(Reason("summary_stored"), started)
        for event in events:
            yield event
        for citation in written.citations:
            yield citation
        record = history_record(
            question, [plan.document.id], summary, "finished", None, metrics, kept.cited, None
        )
        history_id = await self._record(record, conversation_id)
        yield Finished(summary, kept.cited, metrics, history_id, False, _grounded(written))

    async def _record(self, record: HistoryRecord, conversation_id: int | None) -> int:
        """Into the history (and the conversation, if it was asked in one)."""
        return await self.parts.record(dataclasses.replace(record, conversation_id=conversation_id))


def _grounded(written: CitedText) -> float | None:
    """Share of the summary's lines a page supports (cited)."""
    ends = {citation.at for citation in written.citations}
    sentences = [line for line in written.text.split("\n") if line.strip()]
    return min(1.0, len(ends) / len(sentences)) if sentences else None
