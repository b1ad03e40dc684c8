"""Question in, cited answer out: retrieve -> route -> generate -> cite -> record.

The answer is a stream of typed events that the CLI, the GUI, the MCP server and the tests all
consume the same way.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from app.answering.cache import AnswerCache, CachedAnswer, CacheKey, cache_key
from app.answering.calculation import CALCULATION_PROMPT, MAX_CALCULATION_TOKENS, calculate
from app.answering.citations import Attribution, CitationTracker
from app.answering.events import (
    AnswerEvent,
    Citation,
    Failed,
    Finished,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
    Token,
    Waiting,
)
from app.answering.extraction import extract, value_kind
from app.answering.metrics import AnswerMetrics
from app.answering.summary import Summarizer
from app.answering.summary_request import summary_request
from app.cjk import estimate_tokens
from app.documents.chunking import cited_as
from app.index import HistoryRecord, Library, Passage
from app.index.terms import stated_values
from app.llm.engine import (
    CancelToken,
    ChatEngine,
    EngineError,
    GenerationDone,
    GenerationRequest,
    Message,
    Queued,
    StatusReported,
    TokenGenerated,
)
from app.routing import (
    NO_CLOUD,
    QuestionFeatures,
    RetrievalConfidence,
    Route,
    RouteDecision,
    RoutePolicy,
    RouteUnavailable,
)
from app.settings import Settings


@cache  # an Answerer is built per question: the file is read once
def system_prompt() -> str:
    return (
        resources.files("resources")
        .joinpath("prompts/answer_system.txt")
        .read_text(encoding="utf-8")
        .strip()
    )


def build_messages(
    system: str,
    question: str,
    sources: Sequence[Source],
    *,
    names: bool = True,
    hint: str | None = None,
) -> list[Message]:
    """Numbered sources, then the question. The system message never varies (KV cache reuse).

    A source's header names its section when its text does not start with it: a changelog
    entry's version, a manual's chapter is often only there. `names=False` (privacy: excerpts
    only) leaves out file names, pages and headings.
    """
    blocks = [f"{_source_header(s) if names else f'[{s.number}]'}\n{s.text}" for s in sources]
    user = "Sources:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}"
    if hint is not None:  # an instruction, or what the calculation or extraction step found
        user += f"\n\n{hint}"
    return [Message("system", system), Message("user", user)]


def _source_header(source: Source) -> str:
    header = f"[{source.number}] {source.document}, {cited_as(source.page_label, 'page')}"
    if source.heading and not source.text.startswith(source.heading):
        header += f" — {source.heading}"
    return header


def choose_sources(passages: Sequence[Passage], budget_tokens: int) -> list[Source]:
    """The best passages that fit the prompt budget, numbered from 1 in rank order."""
    chosen: list[Source] = []
    used = 0
    for passage in passages:
        cost = estimate_tokens(passage.chunk.text) + 16
        if chosen and used + cost > budget_tokens:
            continue
        used += cost
        chosen.append(Source.from_passage(len(chosen) + 1, passage))
    return chosen


@dataclass
class _Attempt:
    """One route's try at the answer."""

    decision: RouteDecision
    tracker: CitationTracker
    cited: list[Source] = field(default_factory=list)
    generation: GenerationDone | None = None
    error: str | None = None
    tokens: int = 0
    sent: tuple[Message, ...] | None = None
    hint: str | None = None  # from the calculation or extraction step


# A local draft whose sentences the sources support less than this is escalated (cascade).
CASCADE_GROUNDED = 0.5
SEARCHED_NAMES = 5  # documents named when saying the documents do not answer


# The model saying it found nothing: "Could not find the answer in the documents." is made of
# words the documents hold, so its sentences look supported.
_NOT_FOUND = re.compile(
    r"\b(?:could not|couldn't|cannot|can't|unable to|did not|didn't) find\b"
    r"|\bno (?:relevant )?information\b"
    r"|\bnot (?:mentioned|stated|provided|specified|found|given) in the "
    r"(?:documents?|sources?|text|context|passages?)"
    r"|(?:documents?|sources?|passages?|context|text)(?: provided)? (?:do|does|did)(?: not|n't) "
    r"(?:mention|say|state|specify|contain|include|provide)"
    r"|(?:未|没有|无法)找到|找不到"
    r"|(?:文档|资料|来源|信息|上下文)[^。，,]{0,12}(?:没有|未|并未|不)(?:提到|提及|说明|包含|提供)",
    re.IGNORECASE,
)


def _unsupported(attempt: _Attempt) -> bool:
    """A finished answer no sentence of which a source supports came from the model's memory,
    not from the documents, as does one saying it found nothing. A computed value is the
    calculator's, not a source's: supported."""
    generation = attempt.generation
    if attempt.error or generation is None or generation.finish_reason == "cancelled":
        return False
    answer = attempt.tracker.text
    if _NOT_FOUND.search(answer):
        return True
    if attempt.tracker.grounded_share:
        return False
    return not (attempt.hint and stated_values(attempt.hint) & stated_values(answer))


class Answerer:
    """Retrieve, route, generate, cite, record. `cloud_engine(model)` gives the engine for a
    cloud model the policy chose; a cloud failure before the first token falls back to local."""

    def __init__(
        self,
        library: Library,
        local: ChatEngine,
        policy: RoutePolicy,
        settings: Settings,
        cloud_engine: Callable[[str], ChatEngine] | None = None,
        cache: AnswerCache | None = None,
        on_cost: Callable[[float | None], None] | None = None,
    ) -> None:
        """`on_cost` hears what each answer cost (the router's monthly budget)."""
        self.library = library
        self.local = local
        self.policy = policy
        self.settings = settings
        self.cloud_engine = cloud_engine
        self.cache = cache or AnswerCache(settings.routing.cache_ttl_s)
        self.on_cost = on_cost
        self._system = system_prompt()

    async def answer(
        self,
        question: str,
        scope: Sequence[int] | None = None,
        cancel: CancelToken | None = None,
        route: Route | None = None,
    ) -> AsyncIterator[AnswerEvent]:
        """`route` forces local or cloud (the user's "re-ask with the other route")."""
        cancel = cancel or CancelToken()
        started = time.perf_counter()
        question = question.strip()
        if not question:
            yield Failed("the question is empty", None)
            return
        if (request := summary_request(question)) is not None:
            summarizer = Summarizer.beside(self)
            async for event in summarizer.answer(request, question, scope, cancel, route):
                yield event
            return
        key: CacheKey | None = None
        if self.cache.enabled and route is None:
            key = cache_key(question, scope, await self.library.index_version())
            if (waiting := self.cache.in_flight(key)) is not None:
                await asyncio.shield(waiting)  # the same question is being answered: share it
            if (cached := self.cache.get(key)) is not None:
                async for event in self._replay(question, scope, cached, started):
                    yield event
                return
            self.cache.claim(key)
        finished: CachedAnswer | None = None
        sources: tuple[Source, ...] = ()
        try:
            async for event in self._generate(question, scope, cancel, route, started):
                if isinstance(event, SourcesFound):
                    sources = event.sources
                if isinstance(event, Finished) and not event.cancelled and event.answer:
                    finished = CachedAnswer(
                        event.answer,
                        sources,
                        event.citations,
                        event.metrics.model,
                        event.grounded,
                        self.cache.now(),
                    )
                yield event
        finally:
            if key is not None:
                self.cache.release(key, finished)

    async def _generate(
        self,
        question: str,
        scope: Sequence[int] | None,
        cancel: CancelToken,
        route: Route | None,
        started: float,
    ) -> AsyncIterator[AnswerEvent]:
        retrieval = self.settings.retrieval
        passages = await self.library.search(question, retrieval.top_k, scope)
        sources = choose_sources(passages, retrieval.context_tokens)
        retrieved = time.perf_counter()
        if not sources:
            documents = await self.library.documents()
            yield Failed(
                "No documents are indexed yet: add some first."
                if not documents
                else "Nothing in the indexed documents matches this question.",
                None,
            )
            return
        yield SourcesFound(tuple(sources), RetrievalConfidence.read(passages))
        try:
            decision = self.policy.decide(question, passages, route)
        except RouteUnavailable as unavailable:
            yield Failed(str(unavailable), None)
            return
        yield RouteDecided(decision.route, decision.model, decision.reason)

        attempt = _Attempt(decision, CitationTracker(sources, question))
        if decision.route == "local":
            features = QuestionFeatures.read(question)
            if "computation" in features.cues:
                yield Status("working out the arithmetic")
                attempt.hint = await self._calculate(question, sources, cancel)
            elif features.parts == 1 and (kind := value_kind(question)) is not None:
                found = extract(kind, question, sources)
                attempt.hint = None if found is None else found.line
        async for event in self._stream(attempt, question, sources, cancel):
            yield event
        if (escalation := self._draft_check(attempt, question)) is not None:
            # Cascade: the local draft failed its check; the cloud answers, shown the draft.
            yield RouteDecided(escalation.route, escalation.model, escalation.reason)
            draft = attempt.tracker.text.strip()
            attempt = _Attempt(escalation, CitationTracker(sources, question))
            async for event in self._stream(attempt, question, sources, cancel, draft):
                yield event
        if attempt.error and attempt.decision.route == "cloud" and attempt.tokens == 0:
            # The cloud failed before its first token: answer locally, and say so.
            reason = f"cloud failed before its first token ({attempt.error}); answered locally"
            fallback = RouteDecision("fallback", self.local.model, reason)
            yield RouteDecided(fallback.route, fallback.model, fallback.reason)
            attempt = _Attempt(fallback, CitationTracker(sources, question))
            async for event in self._stream(attempt, question, sources, cancel):
                yield event

        answer = attempt.tracker.text.strip()
        unsupported_draft = None
        if _unsupported(attempt):
            unsupported_draft = answer
            answer = await self._not_in_documents(scope, sources)
            attempt.cited.clear()
        metrics = AnswerMetrics.measure(
            route=attempt.decision.route,
            model=attempt.decision.model,
            reason=attempt.decision.reason,
            started_at=started,
            retrieved_at=retrieved,
            finished_at=time.perf_counter(),
            generation=attempt.generation,
        )
        generation = attempt.generation
        cancelled = generation is not None and generation.finish_reason == "cancelled"
        status = (
            "failed"
            if attempt.error
            else "cancelled"
            if cancelled
            else "declined"
            if unsupported_draft is not None
            else "finished"
        )
        grounded = attempt.tracker.grounded_share
        history_id = await self.library.record(
            _history(question, scope, answer, status, attempt, metrics, grounded)
        )
        if self.on_cost is not None and metrics.cost_usd != 0:  # None (unknown) counts too
            self.on_cost(metrics.cost_usd)
        if attempt.error:
            yield Failed(attempt.error, history_id)
        else:
            yield Finished(
                answer,
                tuple(attempt.cited),
                metrics,
                history_id,
                cancelled,
                grounded,
                attempt.sent,
                unsupported_draft,
            )

    async def _not_in_documents(
        self, scope: Sequence[int] | None, sources: Sequence[Source]
    ) -> str:
        """What Docent says instead of an answer no source supports: which documents it
        searched and where it looked closest, so the user can check (or re-ask the cloud)."""
        documents = await self.library.documents()
        if scope is not None:
            documents = [d for d in documents if d.id in set(scope)]
        names = [d.name for d in documents]
        searched = ", ".join(names[:SEARCHED_NAMES]) + (
            f" and {len(names) - SEARCHED_NAMES} more" if len(names) > SEARCHED_NAMES else ""
        )
        closest = "; ".join(source.where for source in sources[:2])
        return (
            "The documents do not seem to answer this: none of the passages found supports the "
            f"model's answer. Searched {len(names)} document{'s' if len(names) != 1 else ''} "
            f"({searched}); closest passages: {closest}."
        )

    def _draft_check(self, attempt: _Attempt, question: str) -> RouteDecision | None:
        """A finished local draft that no source supports well enough is escalated."""
        generation = attempt.generation
        if attempt.decision.route != "local" or attempt.error or generation is None:
            return None
        if generation.finish_reason == "cancelled":
            return None
        grounded = attempt.tracker.grounded_share
        if grounded is None:
            why = "was empty"
        elif grounded < CASCADE_GROUNDED:
            why = f"was {grounded:.0%} grounded in the sources (below {CASCADE_GROUNDED:.0%})"
        else:
            return None
        return self.policy.escalation(question, why)

    async def _stream(
        self,
        attempt: _Attempt,
        question: str,
        sources: Sequence[Source],
        cancel: CancelToken,
        draft: str = "",
    ) -> AsyncIterator[AnswerEvent]:
        by_number = {source.number: source for source in sources}
        routing = self.settings.routing
        if attempt.decision.route == "cloud":
            if self.cloud_engine is None:
                attempt.error = NO_CLOUD
                return
            engine = self.cloud_engine(attempt.decision.model)
            names = routing.privacy == "standard"
            messages = build_messages(self._system, question, sources, names=names)
            if draft:
                messages[-1] = Message(
                    "user",
                    messages[-1].content
                    + f"\n\nA smaller model drafted this answer; it may be wrong:\n{draft}",
                )
            attempt.sent = tuple(messages)
        else:
            engine = self.local
            messages = build_messages(
                self._system,
                question,
                sources,
                names=self._local_names,
                hint=attempt.hint,
            )
        request = GenerationRequest(
            messages,
            max_tokens=self.settings.local.max_tokens,
            temperature=self.settings.local.temperature,
        )

        def citations(attributions: list[Attribution]) -> list[Citation]:
            found = [Citation(by_number[a.number], a.end, a.explicit) for a in attributions]
            attempt.cited.extend(c.source for c in found if c.source not in attempt.cited)
            return found

        try:
            async for event in engine.stream(request, cancel):
                if isinstance(event, Queued):
                    yield Waiting(event.ahead)
                elif isinstance(event, StatusReported):
                    yield Status(event.text)
                elif isinstance(event, TokenGenerated):
                    attempt.tokens += 1
                    yield Token(event.text)
                    for citation in citations(attempt.tracker.feed(event.text)):
                        yield citation
                elif isinstance(event, GenerationDone):
                    attempt.generation = event
        except EngineError as failure:
            attempt.error = str(failure)
        for citation in citations(attempt.tracker.finish()):
            yield citation

    @property
    def _local_names(self) -> bool:
        # A cascade sends the local draft to the cloud: in excerpts mode the draft is written
        # from the excerpts alone, so it cannot quote a file name the cloud may not see.
        routing = self.settings.routing
        return routing.privacy != "excerpts" or not routing.cascade

    async def _calculate(
        self, question: str, sources: Sequence[Source], cancel: CancelToken
    ) -> str | None:
        """The local model writes the arithmetic; Python computes it (see calculation.py). The
        request shares the answer's prompt up to the question, so its KV cache is reused."""
        messages = build_messages(
            self._system, question, sources, names=self._local_names, hint=CALCULATION_PROMPT
        )
        request = GenerationRequest(messages, MAX_CALCULATION_TOKENS, 0.0)
        written: list[str] = []
        try:
            async for event in self.local.stream(request, cancel):
                if isinstance(event, TokenGenerated):
                    written.append(event.text)
        except EngineError:
            return None  # the answer itself reports what is wrong with the engine
        calculation = calculate("".join(written))
        return None if calculation is None else calculation.line

    async def _replay(
        self,
        question: str,
        scope: Sequence[int] | None,
        cached: CachedAnswer,
        started: float,
    ) -> AsyncIterator[AnswerEvent]:
        """A cache hit: the earlier answer, whole, as its own route."""
        age = self.cache.now() - cached.stored_at
        decision = RouteDecision(
            "cache", cached.model, f"asked {age:.0f} s ago; cached for {self.cache.ttl_s:g} s"
        )
        yield SourcesFound(cached.sources)
        yield RouteDecided(decision.route, decision.model, decision.reason)
        yield Token(cached.answer)
        answered = time.perf_counter()
        generation = GenerationDone(0, 0, "stop", answered, answered)
        metrics = AnswerMetrics.measure(
            route="cache",
            model=cached.model,
            reason=decision.reason,
            started_at=started,
            retrieved_at=started,
            finished_at=answered,
            generation=generation,
        )
        attempt = _Attempt(decision, CitationTracker(cached.sources, question))
        attempt.cited = list(cached.citations)
        history_id = await self.library.record(
            _history(question, scope, cached.answer, "finished", attempt, metrics, cached.grounded)
        )
        yield Finished(cached.answer, cached.citations, metrics, history_id, False, cached.grounded)


def _history(
    question: str,
    scope: Sequence[int] | None,
    answer: str,
    status: str,
    attempt: _Attempt,
    metrics: AnswerMetrics,
    grounded: float | None,
) -> HistoryRecord:
    decision = attempt.decision
    return HistoryRecord(
        question=question,
        scope=list(scope or []),
        answer=answer,
        status=status,
        error=attempt.error,
        route=decision.route,
        model=decision.model,
        reason=decision.reason,
        citations=[source.as_dict() for source in attempt.cited],
        retrieval_s=metrics.retrieval_s,
        ttft_s=metrics.ttft_s,
        total_s=metrics.total_s,
        prompt_tokens=metrics.prompt_tokens,
        completion_tokens=metrics.completion_tokens,
        tokens_per_s=metrics.tokens_per_s,
        cost_usd=metrics.cost_usd,
        grounded=grounded,
        sent=None
        if attempt.sent is None
        else [{"role": m.role, "content": m.content} for m in attempt.sent],
    )
