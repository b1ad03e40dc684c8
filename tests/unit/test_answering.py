"""The answer event stream, with a scripted engine in place of the model."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from app.answering import (
    AnswerRecorded,
    Citation,
    Failed,
    Finished,
    RouteDecided,
    SourcesFound,
    Token,
)
from app.answering.cache import AnswerCache
from app.answering.conversation import Conversation
from app.answering.pipeline import Answerer, build_messages, choose_sources
from app.answering.run import Parts
from app.documents import Chunk
from app.index import HistoryEntry, Library
from app.index.store import NewDocument
from app.llm.engine import (
    CancelToken,
    EngineError,
    GenerationDone,
    GenerationEvent,
    GenerationRequest,
    PromptEvaluated,
    TokenGenerated,
)
from app.routing import NO_CLOUD, AutoPolicy, CloudModel, LocalOnlyPolicy, Route
from app.settings import Settings


class ScriptedEngine:
    route = "local"

    def __init__(self, pieces: list[str], fail: str | None = None, model: str = "scripted") -> None:
        self.pieces = pieces
        self.fail = fail
        self.model = model
        self.requests: list[GenerationRequest] = []

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        self.requests.append(request)
        yield PromptEvaluated(100)
        if self.fail:
            raise EngineError(self.fail)
        first = last = None
        count = 0
        for piece in self.pieces:
            if cancel.is_cancelled():
                yield GenerationDone(100, count, "cancelled", first, last)
                return
            if piece.startswith("!"):  # a failure in mid-answer
                raise EngineError(piece[1:])
            last = time.perf_counter()
            first = first or last
            count += 1
            yield TokenGenerated(piece)
        yield GenerationDone(100, count, "stop", first, last)


async def library_with_report(path: Path) -> Library:
    library = Library(path, None)
    await library.open()
    chunks = [
        Chunk(0, 1, "i", "Introduction", "Northwind Ltd. governs its data carefully."),
        Chunk(1, 2, "1", "Retention", "Customer invoices are retained for seven years."),
    ]
    await library.write(
        lambda store: store.write_document(
            NewDocument("/docs/report.pdf", "Report", "pdf", "x", 1, 1, 2, None), chunks
        )
    )
    return library


def collect(
    answerer: Answerer,
    question: str,
    cancel: CancelToken | None = None,
    route: Route | None = None,
) -> list:
    async def gather() -> list:
        events = []
        async for event in answerer.answer(question, cancel=cancel, route=route):
            events.append(event)
            if cancel and isinstance(event, Token):
                cancel.cancel()
        return events

    return asyncio.run(gather())


def make_answerer(tmp_path: Path, engine: ScriptedEngine) -> tuple[Answerer, Library]:
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    return Answerer(Parts(library, engine, LocalOnlyPolicy("scripted"), Settings())), library


def test_event_order_citations_metrics_and_history(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Invoices are retained", " for seven years.", " Done"])
    answerer, library = make_answerer(tmp_path, engine)
    events = collect(answerer, "How long are customer invoices kept?")
    assert [type(e) for e in events] == [
        SourcesFound,
        RouteDecided,
        Token,
        Token,
        Token,
        Citation,
        Finished,
    ]
    sources = events[0].sources
    assert [s.page for s in sources][:1] == [2]
    citation = events[5]
    assert citation.source.page == 2
    assert citation.at == len("Invoices are retained for seven years.")
    finished = events[-1]
    # The supported sentence ends in its source's marker (the scripted model wrote none).
    assert finished.answer == "Invoices are retained for seven years [1]. Done"
    assert finished.metrics.completion_tokens == 3
    assert finished.grounded == 0.5  # "Done" is supported by no source
    assert finished.metrics.route == "local"
    assert finished.metrics.ttft_s is not None
    history = asyncio.run(library.read(lambda store: store.history()))
    assert history[0].answer == finished.answer
    assert history[0].status == "finished"
    assert engine.requests[0].messages[0].role == "system"
    assert "[1] report.pdf, page 1 — Retention\nCustomer invoices" in (
        engine.requests[0].messages[1].content
    )


def test_cancel_ends_with_a_cancelled_finish(tmp_path: Path) -> None:
    answerer, library = make_answerer(tmp_path, ScriptedEngine(["a", "b", "c", "d"]))
    events = collect(answerer, "invoices?", CancelToken())
    assert sum(isinstance(e, Token) for e in events) == 1
    assert events[-1].cancelled
    assert asyncio.run(library.read(lambda store: store.history()))[0].status == "cancelled"


def test_engine_failure_is_a_failed_event_and_recorded(tmp_path: Path) -> None:
    answerer, library = make_answerer(tmp_path, ScriptedEngine([], fail="model crashed"))
    events = collect(answerer, "invoices?")
    assert isinstance(events[-1], Failed)
    assert events[-1].error == "model crashed"
    row = asyncio.run(library.read(lambda store: store.history()))[0]
    assert (row.status, row.error) == ("failed", "model crashed")


def test_asking_for_a_route_that_does_not_exist_fails_with_the_reason(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Seven years."])
    answerer, _ = make_answerer(tmp_path, engine)
    events = collect(answerer, "How long are invoices kept?", route="cloud")
    assert isinstance(events[-1], Failed)
    assert events[-1].error == NO_CLOUD
    assert engine.requests == []
    local = collect(answerer, "How long are invoices kept?", route="local")[-1]
    assert local.metrics.reason == "you asked for the local model"


def test_an_empty_library_and_an_empty_question_fail_clearly(tmp_path: Path) -> None:
    async def empty() -> Library:
        library = Library(tmp_path / "empty.sqlite3", None)
        await library.open()
        return library

    parts = Parts(asyncio.run(empty()), ScriptedEngine([]), LocalOnlyPolicy("x"), Settings())
    answerer = Answerer(parts)
    assert collect(answerer, "anything?")[-1].error.startswith("No documents are indexed yet")
    assert collect(answerer, "   ")[-1].error == "the question is empty"


def test_sources_respect_the_prompt_budget(tmp_path: Path) -> None:
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    passages = asyncio.run(library.search("invoices Northwind", 5))
    assert len(choose_sources(passages, 10_000)) == 2
    assert [s.number for s in choose_sources(passages, 20)] == [1]
    messages = build_messages("system text", "Q?", choose_sources(passages, 10_000))
    assert messages[1].content.endswith("Question: Q?")


QUESTION = "How long are customer invoices kept?"


def cloud_answerer(
    tmp_path: Path, cloud: ScriptedEngine, local: ScriptedEngine, **routing: object
) -> tuple[Answerer, Library]:
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    settings = Settings.model_validate({"routing": {"mode": "cloud", **routing}})
    policy = AutoPolicy(
        settings.routing, local.model, lambda: [CloudModel("gw/big", "gw", True)], lambda: 1.0
    )
    answerer = Answerer(Parts(library, local, policy, settings, cloud_engine=lambda model: cloud))
    return answerer, library


def history(library: Library) -> list[HistoryEntry]:
    return asyncio.run(library.history(50))


def test_a_repeated_question_is_a_cache_hit_with_its_own_route(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Invoices are retained", " for seven years."])
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    recorded: list[AnswerRecorded] = []  # each answer recorded, the cached one too
    policy = LocalOnlyPolicy("scripted")
    answerer = Answerer(Parts(library, engine, policy, Settings(), on_recorded=recorded.append))
    first = collect(answerer, QUESTION)[-1]
    again = collect(answerer, "  how long are customer invoices KEPT  ")  # same, normalised
    assert len(engine.requests) == 1
    decided = next(e for e in again if isinstance(e, RouteDecided))
    assert (decided.route, decided.model) == ("cache", "scripted")
    finished = again[-1]
    assert finished.answer == first.answer
    assert finished.citations == first.citations
    assert (finished.metrics.route, finished.metrics.cost_usd) == ("cache", 0.0)
    assert [row.route for row in history(library)] == ["cache", "local"]
    assert recorded == [
        AnswerRecorded(first.history_id, None, 0.0),
        AnswerRecorded(finished.history_id, None, 0.0),
    ]


def test_a_changed_index_or_an_expired_entry_is_a_miss(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Seven years."])
    answerer, library = make_answerer(tmp_path, engine)
    now = [0.0]
    answerer.cache = AnswerCache(300, clock=lambda: now[0])
    collect(answerer, QUESTION)
    now[0] = 301.0
    collect(answerer, QUESTION)
    assert len(engine.requests) == 2  # expired
    asyncio.run(library.remove(1))
    asyncio.run(library_with_report_into(library))
    collect(answerer, QUESTION)
    assert len(engine.requests) == 3  # the index changed


async def library_with_report_into(library: Library) -> None:
    chunks = [Chunk(0, 1, "1", "Retention", "Customer invoices are retained for ten years.")]
    await library.write(
        lambda store: store.write_document(
            NewDocument("/docs/new.pdf", "New", "pdf", "y", 1, 1, 1, None), chunks
        )
    )


def test_identical_questions_in_flight_share_one_generation(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Seven", " years."])
    answerer, _ = make_answerer(tmp_path, engine)

    async def both() -> list[list]:
        async def one() -> list:
            return [event async for event in answerer.answer(QUESTION)]

        return list(await asyncio.gather(one(), one()))

    first, second = asyncio.run(both())
    assert len(engine.requests) == 1
    assert {first[-1].metrics.route, second[-1].metrics.route} == {"local", "cache"}


def test_a_cloud_failure_before_the_first_token_falls_back_to_local(tmp_path: Path) -> None:
    cloud = ScriptedEngine([], fail="gw: cannot reach http://127.0.0.1:9/mcp", model="gw/big")
    local = ScriptedEngine(["Seven years."])
    answerer, library = cloud_answerer(tmp_path, cloud, local)
    events = collect(answerer, QUESTION)
    routes = [(e.route, e.reason) for e in events if isinstance(e, RouteDecided)]
    assert routes == [
        ("cloud", "routing mode: cloud only"),
        (
            "fallback",
            "cloud failed before its first token (gw: cannot reach http://127.0.0.1:9/mcp); "
            "answered locally",
        ),
    ]
    assert events[-1].answer == "Seven years [1]."
    assert events[-1].metrics.route == "fallback"
    assert history(library)[0].question == QUESTION  # the question is never lost


def test_a_cloud_failure_mid_answer_fails_and_keeps_the_partial_answer(tmp_path: Path) -> None:
    cloud = ScriptedEngine(["Seven", "!the stream from gw was cut off"], model="gw/big")
    answerer, library = cloud_answerer(tmp_path, cloud, ScriptedEngine(["x"]))
    events = collect(answerer, QUESTION)
    assert isinstance(events[-1], Failed)
    assert events[-1].error == "the stream from gw was cut off"
    row = history(library)[0]
    assert (row.status, row.answer, row.route) == ("failed", "Seven [1]", "cloud")


def test_privacy_excerpts_sends_no_file_names_and_records_what_was_sent(tmp_path: Path) -> None:
    cloud = ScriptedEngine(["Seven years."], model="gw/big")
    answerer, library = cloud_answerer(tmp_path, cloud, ScriptedEngine(["x"]), privacy="excerpts")
    finished = collect(answerer, QUESTION)[-1]
    sent = cloud.requests[0].messages[1].content
    assert "report.pdf" not in sent
    assert "[1]\nCustomer invoices are retained for seven years." in sent
    assert finished.sent == tuple(cloud.requests[0].messages)
    assert history(library)[0].sent[1]["content"] == sent


def test_in_excerpts_mode_a_follow_up_sends_no_earlier_answer_that_quoted_a_file_name(
    tmp_path: Path,
) -> None:
    # Without the cascade the local model sees file names: its answer may quote them.
    local = ScriptedEngine(["As report.pdf says under Retention, seven years."])
    cloud = ScriptedEngine(["For tax audits."], model="gw/big")
    answerer, _ = cloud_answerer(tmp_path, cloud, local, privacy="excerpts", cascade=False)
    conversation = Conversation()

    async def ask(question: str, route: Route | None) -> None:
        async for _ in answerer.answer(question, route=route, conversation=conversation):
            pass

    asyncio.run(ask(QUESTION, "local"))
    asyncio.run(ask("Why?", None))
    sent = "\n".join(message.content for message in cloud.requests[0].messages)
    assert [m.role for m in cloud.requests[0].messages] == ["system", "user"]  # no earlier turn
    assert "As " not in sent
    assert "says" not in sent
    assert "report" not in sent.lower()
    assert "retention" not in sent.lower()


def test_privacy_standard_names_the_documents(tmp_path: Path) -> None:
    cloud = ScriptedEngine(["Seven years."], model="gw/big")
    answerer, _ = cloud_answerer(tmp_path, cloud, ScriptedEngine(["x"]), privacy="standard")
    collect(answerer, QUESTION)
    assert "[1] report.pdf, page 1" in cloud.requests[0].messages[1].content


def cascade_answerer(
    tmp_path: Path,
    local: ScriptedEngine,
    cloud: ScriptedEngine,
    cascade: bool = True,
    library: Library | None = None,
) -> Answerer:
    library = library or asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    settings = Settings.model_validate({"routing": {"cascade": cascade, "privacy": "excerpts"}})
    policy = AutoPolicy(
        settings.routing, local.model, lambda: [CloudModel("gw/big", "gw", True)], lambda: 1.0
    )
    return Answerer(Parts(library, local, policy, settings, cloud_engine=lambda model: cloud))


def test_cascade_escalates_an_ungrounded_local_draft_with_the_draft_attached(
    tmp_path: Path,
) -> None:
    local = ScriptedEngine(["Bananas are yellow."])
    cloud = ScriptedEngine(["Invoices are kept for seven years."], model="gw/big")
    events = collect(cascade_answerer(tmp_path, local, cloud), QUESTION)
    decided = [(e.route, e.reason) for e in events if isinstance(e, RouteDecided)]
    assert decided[0][0] == "local"
    assert decided[1] == (
        "cloud",
        "cascade: the local draft was 0% grounded in the sources (below 50%)",
    )
    assert "A smaller model drafted this answer; it may be wrong:\nBananas are yellow." in (
        cloud.requests[0].messages[-1].content
    )
    assert events[-1].answer == "Invoices are kept for seven years [1]."
    assert events[-1].metrics.route == "cloud"


def test_cascade_keeps_a_grounded_draft_and_is_off_by_default(tmp_path: Path) -> None:
    grounded = ScriptedEngine(["Customer invoices are retained for seven years."])
    cloud = ScriptedEngine(["x"], model="gw/big")
    assert collect(cascade_answerer(tmp_path, grounded, cloud), QUESTION)[-1].metrics.route == (
        "local"
    )
    ungrounded = ScriptedEngine(["Bananas are yellow."])
    off = cascade_answerer(tmp_path / "off", ungrounded, cloud, cascade=False)
    assert collect(off, QUESTION)[-1].metrics.route == "local"
    assert cloud.requests == []


class QuotingEngine(ScriptedEngine):
    """A small model that names its source, as they do: its draft quotes the first source's
    header from its prompt (a file name and page when the prompt has them)."""

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        header = next(line for line in request.messages[-1].content.splitlines() if "[1]" in line)
        self.pieces = [f"Bananas are yellow, says {header}."]
        async for event in super().stream(request, cancel):
            yield event


def test_in_excerpts_mode_the_cascade_sends_no_file_name_not_even_in_the_draft(
    tmp_path: Path,
) -> None:
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    local = QuotingEngine([])
    cloud = ScriptedEngine(["Invoices are kept for seven years."], model="gw/big")
    events = collect(cascade_answerer(tmp_path, local, cloud, library=library), QUESTION)
    finished = events[-1]
    assert isinstance(finished, Finished)
    assert finished.metrics.route == "cloud"
    assert finished.sent is not None
    assert "A smaller model drafted this answer" in finished.sent[-1].content  # a draft went…
    sent_then = json.dumps(history(library)[0].sent)
    everything_sent = json.dumps([m.content for m in finished.sent]) + sent_then
    assert "report.pdf" not in everything_sent  # …without the file's name
    assert "page 1" not in everything_sent


def test_an_answer_no_source_supports_is_declined_naming_what_was_searched(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Invoices are printed", " on blue paper in Oslo."])
    answerer, library = make_answerer(tmp_path, engine)
    finished = collect(answerer, "What colour is the paper customer invoices are printed on?")[-1]
    assert isinstance(finished, Finished)
    assert finished.unsupported_draft == "Invoices are printed on blue paper in Oslo."
    assert finished.answer.startswith("The documents do not seem to answer this")
    assert "Searched 1 document (report.pdf); closest passages: report.pdf, p. 1" in finished.answer
    assert finished.citations == ()
    assert finished.grounded == 0.0
    history = asyncio.run(library.read(lambda store: store.history()))
    assert (history[0].status, history[0].answer) == ("declined", finished.answer)


def test_a_follow_up_to_a_declined_answer_is_shown_the_decline_not_the_draft(
    tmp_path: Path,
) -> None:
    """The user read the decline: the draft it withheld is no context for the next turn (the
    model went on from its own invention)."""
    engine = ScriptedEngine(["Invoices are printed", " on blue paper in Oslo."])
    answerer, _ = make_answerer(tmp_path, engine)
    conversation = Conversation()

    async def ask(question: str) -> None:
        async for _ in answerer.answer(question, conversation=conversation):
            pass

    asyncio.run(ask("What colour is the paper customer invoices are printed on?"))
    (turn,) = conversation.turns
    assert turn.declined
    asyncio.run(ask("And the envelopes?"))
    earlier = engine.requests[1].messages[2]
    assert earlier.role == "assistant"
    assert earlier.content.startswith("The documents do not seem to answer this")
    assert "Oslo" not in "\n".join(message.content for message in engine.requests[1].messages)


def test_a_supported_answer_is_given_whole(tmp_path: Path) -> None:
    engine = ScriptedEngine(["Customer invoices are retained for seven years."])
    answerer, _ = make_answerer(tmp_path, engine)
    finished = collect(answerer, "How long are customer invoices kept?")[-1]
    assert finished.unsupported_draft is None
    assert finished.answer == "Customer invoices are retained for seven years [1]."


def test_privacy_excerpts_sends_a_follow_up_without_the_conversation(tmp_path: Path) -> None:
    """`excerpts` means the question and the excerpts: a follow-up on the cloud carries none of
    the earlier turns (an earlier answer named another document, as a declined one does: "Searched
    3 documents (secret-plan.xlsx, …)"), only the question as it was searched and its excerpts."""
    first = "Searched 2 documents (secret-plan.xlsx, report.pdf); see Secret Plan, sheet 2."
    cloud = ScriptedEngine([first, "Seven years."], model="gw/big")
    answerer, library = cloud_answerer(tmp_path, cloud, ScriptedEngine(["x"]), privacy="excerpts")
    conversation = Conversation()

    async def converse() -> None:
        for question in (QUESTION, "And why?"):
            async for _ in answerer.answer(question, conversation=conversation):
                pass

    asyncio.run(converse())
    follow_up = cloud.requests[1].messages
    assert [m.role for m in follow_up] == ["system", "user"]  # no earlier turn
    sent = follow_up[-1].content
    assert sent.endswith(f"Question: {QUESTION} And why?")  # as it was searched
    assert "[1]\n" in sent  # the excerpts, numbered, without file names or pages
    for leak in ("secret", "Secret", "report.pdf", "page", "Searched"):
        assert leak not in sent
    assert history(library)[0].sent == [{"role": m.role, "content": m.content} for m in follow_up]
