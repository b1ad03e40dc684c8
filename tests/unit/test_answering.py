"""The answer event stream, with a scripted engine in place of the model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from app.answering import (
    Answerer,
    Citation,
    Failed,
    Finished,
    RouteDecided,
    SourcesFound,
    Token,
    build_messages,
    choose_sources,
)
from app.documents import Chunk
from app.index import Library
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
from app.routing import NO_CLOUD, LocalOnlyPolicy, Route
from app.settings import Settings


class ScriptedEngine:
    route = "local"
    model = "scripted"

    def __init__(self, pieces: list[str], fail: str | None = None) -> None:
        self.pieces = pieces
        self.fail = fail
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
    return Answerer(library, {"local": engine}, LocalOnlyPolicy("scripted"), Settings()), library


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
    assert finished.answer == "Invoices are retained for seven years. Done"
    assert finished.metrics.completion_tokens == 3
    assert finished.grounded == 0.5  # "Done" is supported by no source
    assert finished.metrics.route == "local"
    assert finished.metrics.ttft_s is not None
    history = asyncio.run(library.read(lambda store: store.history()))
    assert history[0]["answer"] == finished.answer
    assert history[0]["status"] == "finished"
    assert engine.requests[0].messages[0].role == "system"
    assert "[1] report.pdf, page 1\nCustomer invoices" in (engine.requests[0].messages[1].content)


def test_cancel_ends_with_a_cancelled_finish(tmp_path: Path) -> None:
    answerer, library = make_answerer(tmp_path, ScriptedEngine(["a", "b", "c", "d"]))
    events = collect(answerer, "invoices?", CancelToken())
    assert sum(isinstance(e, Token) for e in events) == 1
    assert events[-1].cancelled
    assert asyncio.run(library.read(lambda store: store.history()))[0]["status"] == "cancelled"


def test_engine_failure_is_a_failed_event_and_recorded(tmp_path: Path) -> None:
    answerer, library = make_answerer(tmp_path, ScriptedEngine([], fail="model crashed"))
    events = collect(answerer, "invoices?")
    assert isinstance(events[-1], Failed)
    assert events[-1].error == "model crashed"
    row = asyncio.run(library.read(lambda store: store.history()))[0]
    assert (row["status"], row["error"]) == ("failed", "model crashed")


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

    answerer = Answerer(
        asyncio.run(empty()), {"local": ScriptedEngine([])}, LocalOnlyPolicy("x"), Settings()
    )
    assert collect(answerer, "anything?")[-1].error.startswith("No documents are indexed yet")
    assert collect(answerer, "   ")[-1].error == "the question is empty"


def test_sources_respect_the_prompt_budget(tmp_path: Path) -> None:
    library = asyncio.run(library_with_report(tmp_path / "library.sqlite3"))
    passages = asyncio.run(library.search("invoices Northwind", 5))
    assert len(choose_sources(passages, 10_000)) == 2
    assert [s.number for s in choose_sources(passages, 20)] == [1]
    messages = build_messages("system text", "Q?", choose_sources(passages, 10_000))
    assert messages[1].content.endswith("Question: Q?")
