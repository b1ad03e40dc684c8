"""The front door for questions, the twin of `Intake`: every front end (the window, the CLI, the
MCP server, the benches) asks, summarizes and keeps conversations here, and none of them builds
an answerer, starts the cloud or reads the library's store itself.

- `ask`: a question (or a summary asked as one) as a stream of answer events, in a conversation
  or alone. The parts are gathered for each question: the local engine (loaded on first use),
  the router over the cloud routes open now and the month's budget.
- `summary`: a document's summary job: its plan, what it will take (`estimate`), then `run`.
- `conversations`, `search_conversations`, `open`, `latest`, `rename`, `drop_turns`, `delete`,
  `history`: what was asked, typed.
- `subscribe`: each answer recorded (whoever asked) and each conversation deleted, so a window
  follows questions asked over its own MCP server as it follows its own.

A caller that never opened the cloud routes (a one-off command) gets them opened and settled at
its first question, so it routes with every route it will have; the window and the MCP server
open them at start-up and route around one still connecting.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.answering.budget import Budget
from app.answering.cache import AnswerCache
from app.answering.conversation import Conversation, ConversationNotFound, reopen
from app.answering.events import AnswerEvent, AnswerRecorded
from app.answering.run import Parts
from app.answering.summary_request import chapter_request
from app.catalog import Progress, Speed
from app.cloud.session import CloudSession
from app.errors import DocentError
from app.index import ConversationInfo, ConversationMatch, HistoryEntry, Library
from app.llm.chat_model import LocalChatModel
from app.llm.engine import CancelToken
from app.routing import AutoPolicy, Reason, RetrievalConfidence, Route, RouteDecision
from app.settings import RoutingSettings, Settings
from app.workers import Subscription, import_later, publish

if TYPE_CHECKING:
    from app.answering.pipeline import Answerer
    from app.answering.summary import Estimate, Summarizer, SummaryEvent, SummaryPlan
    from app.cloud.routes import CloudRoutes


class NoConversation(DocentError):
    """Asked to continue the latest conversation when none is kept yet."""


@dataclass(frozen=True, slots=True)
class ConversationDeleted:
    conversation_id: int


@dataclass(frozen=True, slots=True)
class AnswersForgotten:
    count: int


DeskEvent = AnswerRecorded | ConversationDeleted | AnswersForgotten


@dataclass(frozen=True, slots=True)
class RoutePreview:
    """Where a question would go, and why, with the evidence the router read."""

    decision: RouteDecision
    evidence: RetrievalConfidence
    passages: int  # how many passages the search found (0: the answer would say so)
    local_on_server: bool = False  # the local route runs on the user's model server


@dataclass(frozen=True)
class SummaryJob:
    """A document's summary, planned and estimated; `run` writes it (or replays the stored
    one: route None)."""

    plan: SummaryPlan
    estimate: Estimate
    summarizer: Summarizer

    def run(
        self,
        route: str | None = None,
        model: str | None = None,
        cancel: CancelToken | None = None,
        *,
        replace_stored: bool = True,
    ) -> AsyncIterator[SummaryEvent]:
        """`route` "local" or "cloud" (None: the stored summary, else the local model); `model`
        the cloud model picked (None: the router's). The summary is stored, replacing the one
        kept unless `replace_stored` is False (a client's summary never replaces the user's)."""
        return self.summarizer.summarize(
            self.plan, cancel, route, model=model, replace_stored=replace_stored
        )


class Desk:
    def __init__(
        self,
        library: Library,
        chat: LocalChatModel,
        cloud: CloudSession,
        budget: Budget,
        settings: Callable[[], Settings],
        local_speed: Callable[[], Speed | None],
    ) -> None:
        """`settings` gives the settings in effect at each question; `local_speed` the chat
        model's measured speed (summary estimates)."""
        self.library = library
        self.budget = budget
        self._chat = chat
        self._cloud = cloud
        self._settings = settings
        self._local_speed = local_speed
        self.cache = AnswerCache(settings().routing.cache_ttl_s)
        self._listeners: set[asyncio.Queue[DeskEvent]] = set()

    def apply(self, settings: Settings) -> None:
        """New settings: earlier answers are no longer served cached."""
        self.cache = AnswerCache(settings.routing.cache_ttl_s)

    # --- questions ---------------------------------------------------------------------------

    async def ask(
        self,
        question: str,
        scope: Sequence[int] | None = None,
        *,
        route: Route | None = None,
        conversation: Conversation | None = None,
        cancel: CancelToken | None = None,
        progress: Progress | None = None,
    ) -> AsyncIterator[AnswerEvent]:
        """`route` forces local or cloud (the user's "re-ask with the other route"); with a
        `conversation` the question is its next turn (a new one is recorded at its first), or,
        the newest question asked again (retry, re-ask), another version of that turn."""
        answerer = await self.answerer(progress)
        if conversation is None:
            events = answerer.answer(question, scope, cancel, route)
        else:
            events = conversation.ask(
                self.library,
                question,
                lambda asking: answerer.answer(question, scope, cancel, route, asking),
            )
        async for event in events:
            yield event

    async def answerer(self, progress: Progress | None = None) -> Answerer:
        """The answering pipeline over the parts in effect now; loads the chat model on first
        use (`progress` hears the model files being joined)."""
        pipeline = await import_later("app.answering.pipeline")
        answerer: Answerer = pipeline.Answerer(await self._parts(progress), self.cache)
        return answerer

    async def preview_route(
        self,
        question: str,
        scope: Sequence[int] | None = None,
        routing: RoutingSettings | None = None,
    ) -> RoutePreview:
        """The route `ask` would choose for `question`, and why, without generating: the same
        search and router, and the chat model is not even loaded. `routing`: settings being
        edited and not yet saved (Settings → Routing's "Try a question")."""
        await self.cloud()
        await self.budget.load()
        settings = self._settings()
        passages = await self.library.search(question.strip(), settings.retrieval.top_k, scope)
        policy = self._policy(self._chat.shown, routing)
        return RoutePreview(
            policy.decide(question, passages),
            RetrievalConfidence.read(passages),
            len(passages),
            policy.local_on_server,
        )

    def cloud_refusal(self) -> Reason | None:
        """Why no question could go to the cloud now (None: one could): the router's own
        checks on the settings in effect, for a front end to say beside "Cloud only"."""
        return self._policy(self._chat.shown).cloud_refusal()

    async def summary(
        self, document_id: int, chapter: str | None = None, progress: Progress | None = None
    ) -> SummaryJob:
        """A document's summary (or one chapter's: its number or words of its heading), planned
        and estimated: the local time at the measured speed, each allowed cloud model's cost."""
        summary = await import_later("app.answering.summary")
        summarizer: Summarizer = summary.Summarizer(await self._parts(progress))
        plan = await summarizer.plan(document_id, chapter_request(chapter))
        routes = self._cloud.routes
        allowed = self._settings().routing.privacy != "never"
        models = [m.model for m in self._cloud.models() if m.healthy] if allowed else []
        estimate: Estimate = summary.estimate(
            plan,
            self._local_speed(),
            models,
            routes.prices.cost if routes else None,
            stored=await summarizer.is_stored(plan),
        )
        return SummaryJob(plan, estimate, summarizer)

    async def cloud(self) -> CloudRoutes | None:
        """The cloud routes (None without any): opened and settled if nobody opened them."""
        if not self._cloud.wanted:
            return await self._cloud.ready()
        return self._cloud.routes

    async def _parts(self, progress: Progress | None) -> Parts:
        routes = await self.cloud()
        engine = await self._chat.engine(progress)
        await self.budget.load()
        return Parts(
            self.library,
            engine,
            self._policy(engine.model),
            self._settings(),
            routes.engine if routes else None,
            self._recorded,
            self._chat.on_this_computer if self._chat.settings.server.enabled else None,
        )

    def _policy(self, local_model: str, routing: RoutingSettings | None = None) -> AutoPolicy:
        """The router over the cloud routes open now and the month's budget; it words what
        stays local as staying on the user's model server when the local route runs there."""
        routing = routing or self._settings().routing
        return AutoPolicy(
            routing,
            local_model,
            self._cloud.models,
            self.budget.left_usd,
            local_on_server=self.local_on_server,
        )

    @property
    def local_on_server(self) -> bool:
        """Whether the local route runs on the user's model server (not on this computer)."""
        return self._chat.settings.server.enabled

    def _recorded(self, recorded: AnswerRecorded) -> None:
        if recorded.cost_usd != 0:  # None (a model with no price) counts too
            self.budget.spend(recorded.cost_usd)
        publish(self._listeners, recorded)

    # --- conversations and history -----------------------------------------------------------

    async def conversations(self) -> list[ConversationInfo]:
        """Every conversation, the most recently continued first."""
        return await self.library.conversations()

    async def search_conversations(self, query: str) -> list[ConversationMatch]:
        """The conversations whose title, questions or answers hold `query`: the titles that
        hold it first, then the best matching text (CJK text searched as bigrams)."""
        return await self.library.search_conversations(query)

    async def rename(self, conversation_id: int, title: str) -> None:
        if not await self.library.rename_conversation(conversation_id, title):
            raise ConversationNotFound(f"there is no conversation {conversation_id}")

    async def open(self, conversation_id: int) -> Conversation:
        """A kept conversation with its recorded answers, ready for its next question (an MCP
        client's goes on in a copy of the desktop's own: the client never reads those turns)."""
        return await reopen(self.library, conversation_id)

    async def open_handle(self, handle: str) -> Conversation:
        """An MCP client's conversation, by the handle it was given: a client reaches its own
        conversations only (the desktop's have no handle, and handles cannot be guessed)."""
        conversation_id = await self.library.conversation_by_handle(handle)
        if conversation_id is None:
            raise ConversationNotFound(
                "there is no such conversation (pass the conversation_id of an earlier answer)"
            )
        return await reopen(self.library, conversation_id, handle)

    async def latest(self) -> Conversation:
        """The conversation continued last."""
        conversation_id = await self.library.latest_conversation()
        if conversation_id is None:
            raise NoConversation("there is no conversation to continue yet")
        return await self.open(conversation_id)

    async def delete(self, conversation_id: int) -> None:
        if not await self.library.delete_conversation(conversation_id):
            raise ConversationNotFound(f"there is no conversation {conversation_id}")
        publish(self._listeners, ConversationDeleted(conversation_id))

    async def drop_turns(self, conversation: Conversation, history_id: int) -> int:
        """The user edits a question: its recorded answer (`history_id`) and the later ones of
        `conversation` go, from the library and from the turns its next question continues."""
        dropped = await conversation.drop_from(self.library, history_id)
        if dropped:
            publish(self._listeners, AnswersForgotten(dropped))
        return dropped

    async def answers_quoting(self, document_ids: Collection[int]) -> list[int]:
        """The recorded answers that quote these documents (their passages were cited or sent):
        what removing them leaves behind in the conversations and the history."""
        return await self.library.answers_quoting(document_ids)

    async def forget_answers(self, history_ids: Collection[int]) -> int:
        """Delete these recorded answers; the window's conversations follow."""
        forgotten = await self.library.forget_answers(history_ids)
        publish(self._listeners, AnswersForgotten(forgotten))
        return forgotten

    async def history(self, limit: int) -> list[HistoryEntry]:
        """The latest answers, the newest first."""
        return await self.library.history(limit)

    def subscribe(self) -> Subscription[DeskEvent]:
        """Each answer recorded and each conversation deleted from now on, by any front end."""
        return Subscription(self._listeners)
