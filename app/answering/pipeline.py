"""Question in, cited answer out: retrieve -> route -> generate -> cite -> record.

The answer is a stream of typed events that the CLI, the GUI, the MCP server and the tests all
consume the same way.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import PurePath

from app.answering.cache import AnswerCache, CachedAnswer, CacheKey, cache_key
from app.answering.calculation import CALCULATION_PROMPT, MAX_CALCULATION_TOKENS, calculate
from app.answering.citations import CitationTracker
from app.answering.conversation import Conversation, Plan, Turn
from app.answering.events import (
    DRAFT_REPLACED,
    AnswerEvent,
    DraftReplaced,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
    Token,
)
from app.answering.extraction import extract, value_kind
from app.answering.metrics import AnswerMetrics
from app.answering.run import CitedText, Kept, Parts, history_record
from app.answering.streaming import Outcome, cited_stream
from app.answering.summary import Summarizer
from app.answering.summary_request import summary_request
from app.answering.tables import (
    MAX_QUERY_TOKENS,
    find_tables,
    is_table_question,
    query_prompt,
    run_query,
    whole_tables,
)
from app.cjk import estimate_tokens
from app.documents.chunking import cited_as
from app.errors import DocentError
from app.index import HistoryRecord, Passage, StoredChunk
from app.index.terms import stated_values
from app.llm.engine import (
    CancelToken,
    ChatEngine,
    EngineError,
    GenerationDone,
    GenerationRequest,
    Message,
    TokenGenerated,
)
from app.routing import (
    NO_CLOUD,
    QuestionFeatures,
    Reason,
    RetrievalConfidence,
    Route,
    RouteDecision,
    RouteUnavailable,
)


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
    history: Sequence[Message] = (),
) -> list[Message]:
    """Numbered sources, then the question. The system message never varies (KV cache reuse).

    A source's header names its section when its text does not start with it: a changelog
    entry's version, a manual's chapter is often only there. `names=False` (privacy: excerpts
    only) leaves out file names, pages and headings. `history` is a conversation's earlier
    turns; a follow-up whose sources they all showed sends only its question.
    """
    blocks = [f"{_source_header(s) if names else f'[{s.number}]'}\n{s.text}" for s in sources]
    user = ("Sources:\n\n" + "\n\n".join(blocks) + "\n\n" if blocks else "") + (
        f"Question: {question}"
    )
    if hint is not None:  # an instruction, or what the calculation or extraction step found
        user += f"\n\n{hint}"
    return [Message("system", system), *history, Message("user", user)]


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
    # Whether a cloud model answers: the cloud route, or the fallback after a local crash.
    on_cloud: bool = False
    written: CitedText = field(default_factory=CitedText)
    generation: GenerationDone | None = None
    error: str | None = None
    crashed: bool = False  # the local model's process died answering
    tokens: int = 0
    engine: ChatEngine | None = None  # None: the route's own (parts.engine)
    sent: tuple[Message, ...] | None = None
    hint: str | None = None  # from the calculation or extraction step
    user: str = ""  # the user message this route was sent (a conversation turn keeps it)


@dataclass(frozen=True, slots=True)
class _Asked:
    question: str  # as the user asked it
    standalone: str  # as retrieval read it (a follow-up borrows the earlier question's words)


@dataclass(frozen=True, slots=True)
class _Finishing:
    """What the answer's record needs besides the attempt that answered."""

    question: str
    scope: Sequence[int] | None
    standalone: str
    plan: Plan
    started: float
    retrieved: float


# A local draft whose sentences the sources support less than this is escalated (cascade).
CASCADE_GROUNDED = 0.5
SEARCHED_NAMES = 5  # documents named when saying the documents do not answer
PROMPT_MARKUP = 64  # tokens of chat-template markup and headers, and estimate slack


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
    answer = attempt.written.text
    if _NOT_FOUND.search(answer) or attempt.tracker.key_unverified:
        return True  # (the answer's first sentence of facts states one no passage does)
    if attempt.tracker.grounded_share:
        return False
    return not (attempt.hint and stated_values(attempt.hint) & stated_values(answer))


class Answerer:
    """Retrieve, route, generate, cite, record, over `parts` (run.py); a cloud failure before
    the first token falls back to local."""

    def __init__(self, parts: Parts, cache: AnswerCache | None = None) -> None:
        self.parts = parts
        self.library = parts.library
        self.local = parts.local
        self.policy = parts.policy
        self.settings = parts.settings
        self.cache = cache or AnswerCache(parts.settings.routing.cache_ttl_s)
        self._system = system_prompt()

    async def answer(
        self,
        question: str,
        scope: Sequence[int] | None = None,
        cancel: CancelToken | None = None,
        route: Route | None = None,
        conversation: Conversation | None = None,
    ) -> AsyncIterator[AnswerEvent]:
        """`route` forces local or cloud (the user's "re-ask with the other route").

        With a `conversation` the question is its next turn (see conversation.py): the turn is
        appended to it once answered, and recorded with it (a new one gets its id then)."""
        cancel = cancel or CancelToken()
        started = time.perf_counter()
        question = question.strip()
        if not question:
            yield Failed("the question is empty", None)
            return
        if (request := summary_request(question)) is not None:
            summary = Summarizer(self.parts).answer(
                request, question, scope, cancel, route, conversation
            )
            async for event in summary:
                yield event
            return
        key: CacheKey | None = None
        # A follow-up means what the turns before it make it mean: no cache entry answers it.
        if self.cache.enabled and route is None and not (conversation and conversation.turns):
            key = cache_key(question, scope, await self.library.index_version())
            if (waiting := self.cache.in_flight(key)) is not None:
                await asyncio.shield(waiting)  # the same question is being answered: share it
            if (cached := self.cache.get(key)) is not None:
                async for event in self._replay(question, scope, cached, started, conversation):
                    yield event
                return
            self.cache.claim(key)
        finished: CachedAnswer | None = None
        sources: tuple[Source, ...] = ()
        try:
            async for event in self._generate(
                question, scope, cancel, route, started, conversation
            ):
                if isinstance(event, SourcesFound):
                    sources = event.sources
                if isinstance(event, Finished) and not event.cancelled and event.answer:
                    kept = Kept(
                        event.answer, sources, event.citations, event.metrics.model, event.grounded
                    )
                    finished = CachedAnswer(kept, self.cache.now())
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
        conversation: Conversation | None,
    ) -> AsyncIterator[AnswerEvent]:
        retrieval = self.settings.retrieval
        standalone = question if conversation is None else conversation.standalone(question)
        passages = await self.library.search(standalone, retrieval.top_k, scope)
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
        plan = Plan.alone(sources)
        if conversation is not None:
            present = await self.library.document_ids() if conversation.turns else None
            plan = conversation.plan(sources, self._history_room(question), present)
            conversation_id = await conversation.recorded_id(self.library, question)
            yield InConversation(conversation_id, standalone, plan.dropped)
            if plan.dropped:
                yield Status(
                    f"left out the {plan.dropped} oldest turn{'s' if plan.dropped > 1 else ''} "
                    "of this conversation to fit the model's context"
                )
            if plan.withdrawn:
                yield Status(
                    f"left out {plan.withdrawn} earlier turn{'s' if plan.withdrawn > 1 else ''} "
                    "that quoted a document since removed"
                )
        yield SourcesFound(plan.found, RetrievalConfidence.read(passages))
        try:
            decision = self.policy.decide(question, passages, route)
        except RouteUnavailable as unavailable:
            yield Failed(str(unavailable), None)
            return
        yield RouteDecided(decision.route, decision.model, decision.reason, decision.why)

        tried: list[_Attempt] = []
        asked = _Asked(question, standalone)
        async for event in self._on_routes(decision, asked, plan, cancel, route, tried):
            yield event
        finishing = _Finishing(question, scope, standalone, plan, started, retrieved)
        async for event in self._finish(finishing, tried[-1], conversation):
            yield event

    async def _on_routes(
        self,
        decision: RouteDecision,
        asked: _Asked,
        plan: Plan,
        cancel: CancelToken,
        route: Route | None,
        tried: list[_Attempt],
    ) -> AsyncIterator[AnswerEvent]:
        """The answer on the route decided, then on the next one while a route fails it: a
        local draft no source supports escalates (cascade), a local crash is retried on the
        cloud (rescue), a cloud failure before its first token answers locally (fallback).
        Each attempt is appended to `tried`; the last one is the answer."""
        question = asked.question

        def attempt_on(decision: RouteDecision, on_cloud: bool) -> _Attempt:
            tried.append(_Attempt(decision, CitationTracker(plan.visible, question), on_cloud))
            return tried[-1]

        attempt = attempt_on(decision, decision.route == "cloud")
        if decision.route == "local":
            features = QuestionFeatures.read(question)
            over_table = is_table_question(question) and bool(find_tables(plan.send))
            if over_table or "computation" in features.cues:
                if over_table:
                    yield Status("computing over the table")
                    attempt.hint = await self._tabulate(question, plan, cancel)
                else:
                    yield Status("working out the arithmetic")
                    attempt.hint = await self._calculate(question, plan, cancel)
                if attempt.hint is not None:  # its result is Docent's own: no invention
                    attempt.tracker.computed(attempt.hint)
            elif features.parts == 1 and (kind := value_kind(question)) is not None:
                found = extract(kind, question, plan.found)
                attempt.hint = None if found is None else found.line
        async for event in self._stream(attempt, asked, plan, cancel):
            yield event
        if (escalation := self._draft_check(attempt, question)) is not None:
            # Cascade: the local draft failed its check; the cloud answers, shown the draft.
            yield RouteDecided(
                escalation.route, escalation.model, escalation.reason, escalation.why
            )
            draft = attempt.written.text.strip()
            attempt = attempt_on(escalation, True)
            async for event in self._stream(attempt, asked, plan, cancel, draft):
                yield event
        if attempt.crashed and (rescue := self.policy.rescue(question, attempt.error or "", route)):
            # The local model's process died: the cloud retries, where the user allows it.
            yield RouteDecided(rescue.route, rescue.model, rescue.reason, rescue.why)
            attempt = attempt_on(rescue, True)
            async for event in self._stream(attempt, asked, plan, cancel):
                yield event
        if attempt.error and attempt.on_cloud and attempt.tokens == 0:
            # The cloud failed before its first token: answer locally, and say so.
            why = Reason("cloud_failed", {"error": attempt.error})
            fallback = RouteDecision("fallback", self.local.model, why)
            yield RouteDecided(fallback.route, fallback.model, fallback.reason, why)
            attempt = attempt_on(fallback, False)
            async for event in self._stream(attempt, asked, plan, cancel):
                yield event
        on_its_route = attempt.engine is None and not attempt.on_cloud
        if attempt.error and on_its_route and attempt.tokens == 0:
            # The local route's model server failed before its first token: the model on this
            # computer answers, and the badge says why.
            on_this_computer = await self._on_this_computer()
            if on_this_computer is not None:
                why = Reason("server_failed", {"error": attempt.error})
                fallback = RouteDecision("fallback", on_this_computer.model, why)
                yield RouteDecided(fallback.route, fallback.model, fallback.reason, why)
                attempt = attempt_on(fallback, False)
                attempt.engine = on_this_computer
                async for event in self._stream(attempt, asked, plan, cancel):
                    yield event

    async def _on_this_computer(self) -> ChatEngine | None:
        """The model on this computer, when the local route runs on a model server (and that
        model loads); else None."""
        if self.parts.on_this_computer is None:
            return None
        try:
            return await self.parts.on_this_computer()
        except DocentError:
            return None  # the server's error is the answer's

    async def _finish(
        self, finishing: _Finishing, attempt: _Attempt, conversation: Conversation | None
    ) -> AsyncIterator[AnswerEvent]:
        """The answer as shown (or, when no source supports it, what the documents do not
        say), recorded (in its conversation: the next turn's context), then Finished or Failed."""
        question, plan = finishing.question, finishing.plan
        answer = attempt.written.text.strip()
        cited = attempt.written.cited
        unsupported_draft = None
        if _unsupported(attempt):
            unsupported_draft = answer
            answer = await self._not_in_documents(finishing.scope, plan.found)
            cited = []
            yield DraftReplaced(DRAFT_REPLACED)
        written = answer  # what a follow-up's prompt carries: the KV cache holds it as it is
        if unsupported_draft is None:
            answer = attempt.written.marked()
        metrics = AnswerMetrics.measure(
            route=attempt.decision.route,
            model=attempt.decision.model,
            reason=attempt.decision.reason,
            why=attempt.decision.why,
            started_at=finishing.started,
            retrieved_at=finishing.retrieved,
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
        record = history_record(
            question,
            finishing.scope,
            answer,
            status,
            attempt.error,
            metrics,
            cited,
            grounded,
            attempt.sent,
        )
        turn = None
        if conversation is not None:
            if status in ("finished", "declined"):  # a failed or stopped turn is not context
                # A declined draft is no context: the user read the decline, not the draft.
                declined = status == "declined"
                said = answer if declined else written
                turn = Turn(question, finishing.standalone, attempt.user, said, plan.send, declined)
            record = _in_conversation(record, conversation, finishing.standalone, turn)
        history_id = await self.parts.record(record)
        if conversation is not None and turn is not None:
            conversation.turns.append(turn)
        if attempt.error:
            yield Failed(attempt.error, history_id)
        else:
            yield Finished(
                answer,
                tuple(cited),
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
            why = Reason("draft_empty")
        elif grounded < CASCADE_GROUNDED:
            why = Reason("draft_ungrounded", {"grounded": grounded, "floor": CASCADE_GROUNDED})
        else:
            return None
        return self.policy.escalation(question, why)

    async def _stream(
        self,
        attempt: _Attempt,
        asked: _Asked,
        plan: Plan,
        cancel: CancelToken,
        draft: str = "",
    ) -> AsyncIterator[AnswerEvent]:
        routing = self.settings.routing
        question = asked.question
        engine = attempt.engine or self.parts.engine(attempt.decision, attempt.on_cloud)
        if engine is None:
            attempt.error = NO_CLOUD
            return
        if attempt.on_cloud and routing.privacy == "excerpts":
            # The contract: the question and the excerpts, nothing else. No earlier turn (their
            # answers may name other documents, and a name a model rewrote escapes any
            # scrubbing): a follow-up goes as it was searched, with every excerpt it found.
            messages = build_messages(self._system, asked.standalone, plan.found, names=False)
        elif attempt.on_cloud:
            messages = build_messages(
                self._system, question, plan.send, names=True, history=_turns(plan, True)
            )
        else:
            messages = build_messages(
                self._system,
                question,
                plan.send,
                names=self._local_names,
                hint=attempt.hint,
                history=_turns(plan, self._local_names),
            )
        if attempt.on_cloud:
            if draft:
                messages[-1] = Message(
                    "user",
                    messages[-1].content
                    + f"\n\nA smaller model drafted this answer; it may be wrong:\n{draft}",
                )
            attempt.sent = tuple(messages)
        attempt.user = messages[-1].content
        request = GenerationRequest(
            messages,
            max_tokens=self.settings.local.max_tokens,
            temperature=self.settings.local.temperature,
        )
        outcome = Outcome()
        async for event in cited_stream(
            engine, request, cancel, attempt.tracker, attempt.written, plan.visible, outcome
        ):
            attempt.tokens += isinstance(event, Token)
            yield event
        attempt.generation, attempt.error = outcome.generation, outcome.error
        attempt.crashed = outcome.crashed

    def _history_room(self, question: str) -> int:
        """Prompt tokens left for a conversation's earlier turns and the new sources: the local
        context less the answer, the system prompt, the question and the chat markup. The cloud
        models' contexts are larger: the local one bounds both routes (a fallback answers
        locally)."""
        local = self.settings.local
        fixed = estimate_tokens(self._system) + estimate_tokens(question) + PROMPT_MARKUP
        return local.n_ctx - local.max_tokens - fixed

    @property
    def _local_names(self) -> bool:
        # A cascade sends the local draft to the cloud: in excerpts mode the draft is written
        # from the excerpts alone, so it cannot quote a file name the cloud may not see.
        routing = self.settings.routing
        return routing.privacy != "excerpts" or not routing.cascade

    async def _calculate(self, question: str, plan: Plan, cancel: CancelToken) -> str | None:
        """The local model writes the arithmetic; Python computes it (see calculation.py)."""
        written = await self._local_step(question, plan, CALCULATION_PROMPT, cancel)
        calculation = None if written is None else calculate(written)
        return None if calculation is None else calculation.line

    async def _tabulate(self, question: str, plan: Plan, cancel: CancelToken) -> str | None:
        """The local model writes one SELECT over the sources' tables, each with all its rows;
        SQLite runs it, checked (see tables.py): a count or a total is computed, not guessed."""
        # In excerpts mode a cascade sends the draft to the cloud: it is computed over the
        # excerpts alone, as it is written from them alone.
        chunks = await self._table_documents(plan.send) if self._local_names else []
        # A whole sheet may be thousands of rows: read and described off the loop (the window's).
        tables = await asyncio.to_thread(whole_tables, plan.send, chunks)
        prompt = await asyncio.to_thread(query_prompt, question, tables)
        written = await self._local_step(question, plan, prompt, cancel, MAX_QUERY_TOKENS)
        answer = None if written is None else await asyncio.to_thread(run_query, written, tables)
        return None if answer is None else answer.line

    async def _table_documents(self, sources: Sequence[Source]) -> list[StoredChunk]:
        """Every chunk of the documents whose tables the sources hold part of."""
        documents = {source.document_id for source in sources if find_tables([source])}
        return [c for d in sorted(documents) for c in await self.library.document_chunks(d)]

    async def _local_step(
        self,
        question: str,
        plan: Plan,
        instruction: str,
        cancel: CancelToken,
        max_tokens: int = MAX_CALCULATION_TOKENS,
    ) -> str | None:
        """What the local model writes for a step before the answer (arithmetic, a query), in
        the answer's prompt up to the question, so its KV cache is reused; None when the engine
        fails (the answer itself then reports what is wrong with it)."""
        names = self._local_names
        messages = build_messages(
            self._system,
            question,
            plan.send,
            names=names,
            hint=instruction,
            history=_turns(plan, names),
        )
        request = GenerationRequest(messages, max_tokens, 0.0)
        written: list[str] = []
        try:
            async for event in self.local.stream(request, cancel):
                if isinstance(event, TokenGenerated):
                    written.append(event.text)
        except EngineError:
            return None
        return "".join(written)

    async def _replay(
        self,
        question: str,
        scope: Sequence[int] | None,
        cached: CachedAnswer,
        started: float,
        conversation: Conversation | None,
    ) -> AsyncIterator[AnswerEvent]:
        """A cache hit: the earlier answer, whole, as its own route (the first turn of a
        conversation may be one: its prompt is rebuilt from the cached sources)."""
        kept = cached.kept
        age = self.cache.now() - cached.stored_at
        why = Reason("cached", {"age_s": age, "ttl_s": self.cache.ttl_s})
        if conversation is not None:
            conversation_id = await conversation.recorded_id(self.library, question)
            yield InConversation(conversation_id, question, 0)
        events, metrics = kept.replay(why, started)
        for event in events:
            yield event
        record = history_record(
            question, scope, kept.text, "finished", None, metrics, kept.cited, kept.grounded
        )
        turn = None
        if conversation is not None:
            names = self._local_names
            user = build_messages(self._system, question, kept.sources, names=names)[-1]
            turn = Turn(question, question, user.content, kept.text, kept.sources)
            record = _in_conversation(record, conversation, turn.standalone, turn)
        history_id = await self.parts.record(record)
        if conversation is not None and turn is not None:
            conversation.turns.append(turn)
        yield kept.finished(metrics, history_id)


def _in_conversation(
    record: HistoryRecord, conversation: Conversation, standalone: str, turn: Turn | None
) -> HistoryRecord:
    return replace(
        record,
        conversation_id=conversation.id,
        standalone=standalone,
        turn=None if turn is None else turn.as_record(),
    )


def _turns(plan: Plan, names: bool) -> list[Message]:
    """A conversation's earlier turns as this prompt carries them: verbatim (the KV prefix),
    or without file names, pages and headings where the route may not see them (an earlier
    answer written by a model that saw them may quote them)."""
    shown = [source for turn in plan.kept for source in turn.sources]
    messages: list[Message] = []
    for turn in plan.kept:
        user, answer = turn.user, turn.answer
        if not names:
            user = build_messages("", turn.question, turn.sources, names=False)[-1].content
            answer = _without_names(answer, shown)
        messages += [Message("user", user), Message("assistant", answer)]
    return messages


def _without_names(text: str, sources: Sequence[Source]) -> str:
    """`text` with the sources' file names (with or without their extension) and headings
    replaced by a neutral word, the longest first so a name inside another goes with it."""
    names = {s.document: "the document" for s in sources}
    names |= {PurePath(s.document).stem: "the document" for s in sources}
    names |= {s.heading: "the section" for s in sources if s.heading}
    for name in sorted((n for n in names if len(n) >= 3), key=len, reverse=True):
        text = re.sub(re.escape(name), names[name], text, flags=re.IGNORECASE)
    return text
