"""Question in, cited answer out (pipeline.py): retrieve -> route -> generate -> cite -> record,
as a stream of typed events (events.py), with the answer cache, the citation tracker and the
metrics each answer reports beside it.

The package exports the events only: everything that shows an answer needs them at start-up,
while the pipeline (and its routing, citation and summary rules) loads at the first question."""

from app.answering.events import (
    AnswerEvent,
    AnswerRecorded,
    Citation,
    DraftReplaced,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    Source,
    SourcesFound,
    Status,
    Token,
    Waiting,
)

__all__ = [
    "AnswerEvent",
    "AnswerRecorded",
    "Citation",
    "DraftReplaced",
    "Failed",
    "Finished",
    "InConversation",
    "RouteDecided",
    "Source",
    "SourcesFound",
    "Status",
    "Token",
    "Waiting",
]
