"""A generation's events as an answer's: what the CLI, the window and the MCP server show while a
model writes (its place in the queue, the route's status, tokens), and each sentence's citations
as the sentence ends. Answers and summaries both stream through here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from app.answering.citations import CitationTracker
from app.answering.events import AnswerEvent, Source, Status, Token, Waiting
from app.answering.run import CitedText
from app.llm.engine import (
    CancelToken,
    ChatEngine,
    EngineCrashed,
    EngineError,
    GenerationDone,
    GenerationRequest,
    Queued,
    StatusReported,
    TokenGenerated,
)


@dataclass
class Outcome:
    """How the generation ended: its counts, or the engine's error (a user's words)."""

    generation: GenerationDone | None = None
    error: str | None = None
    crashed: bool = False  # the model's process died (the error says how)


async def cited_stream(
    engine: ChatEngine,
    request: GenerationRequest,
    cancel: CancelToken,
    tracker: CitationTracker,
    written: CitedText,
    sources: Sequence[Source],
    outcome: Outcome,
) -> AsyncIterator[AnswerEvent]:
    """The tokens go on `written`, and each sentence `tracker` attributes to one of `sources`
    becomes a Citation event kept there too."""
    cite = written.citer(sources)
    try:
        async for event in engine.stream(request, cancel):
            if isinstance(event, Queued):
                yield Waiting(event.ahead)
            elif isinstance(event, StatusReported):
                yield Status(event.text)
            elif isinstance(event, TokenGenerated):
                written.text += event.text
                yield Token(event.text)
                for citation in cite(tracker.feed(event.text)):
                    yield citation
            elif isinstance(event, GenerationDone):
                outcome.generation = event
    except EngineError as failure:
        outcome.error = str(failure)
        outcome.crashed = isinstance(failure, EngineCrashed)
    for citation in cite(tracker.finish()):
        yield citation
