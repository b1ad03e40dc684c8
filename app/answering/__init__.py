"""Question in, cited answer out (pipeline.py): retrieve -> route -> generate -> cite -> record,
as a stream of typed events (events.py), with the answer cache, the citation tracker and the
metrics each answer reports beside it."""

from app.answering.events import (
    AnswerEvent,
    Citation,
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
from app.answering.pipeline import Answerer

__all__ = [
    "AnswerEvent",
    "Answerer",
    "Citation",
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
