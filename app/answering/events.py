"""What answering a question says, in order: the sources found, the route, tokens, citations,
then Finished or Failed. The CLI, the window, the MCP server and the tests read these alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.answering.metrics import AnswerMetrics
from app.documents.chunking import cited_as
from app.index import Passage, StoredChunk
from app.llm.engine import (
    Message,
)
from app.routing import Reason, RetrievalConfidence


@dataclass(frozen=True, slots=True)
class Source:
    number: int
    chunk_id: int
    document_id: int
    document: str  # file name
    path: str
    page: int
    page_label: str
    heading: str | None
    text: str
    score: float
    # The sentences of `text` the answer rests on (citations.supporting_sentences): what the
    # window shows of a source and marks apart on its page. Not part of what the source is.
    used: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        # Read back from a stored conversation (JSON), the sentences are a list.
        object.__setattr__(self, "used", tuple(self.used))

    @classmethod
    def from_passage(cls, number: int, passage: Passage) -> Source:
        return cls.from_chunk(number, passage.chunk, passage.score)

    @classmethod
    def from_chunk(cls, number: int, chunk: StoredChunk, score: float) -> Source:
        return cls(
            number=number,
            chunk_id=chunk.id,
            document_id=chunk.document_id,
            document=chunk.document_name,
            path=chunk.document_path,
            page=chunk.page,
            page_label=chunk.page_label,
            heading=chunk.heading,
            text=chunk.text,
            score=score,
        )

    @property
    def where(self) -> str:
        page = cited_as(self.page_label)
        if self.page_label != str(self.page):
            page += f" (page {self.page} of the file)"
        return f"{self.document}, {page}" + (f" — {self.heading}" if self.heading else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "document_id": self.document_id,
            "document": self.document,
            "path": self.path,
            "page": self.page,
            "page_label": self.page_label,
            "heading": self.heading,
            "score": round(self.score, 6),
            "where": self.where,
        }


@dataclass(frozen=True, slots=True)
class SourcesFound:
    sources: tuple[Source, ...]
    evidence: RetrievalConfidence | None = None  # what the router read (None: a cached answer)


@dataclass(frozen=True, slots=True)
class RouteDecided:
    route: str
    model: str
    reason: str  # in English: the CLI's, the history's
    why: Reason | None = None  # the same as a code, for a front end to word in its language


@dataclass(frozen=True, slots=True)
class Waiting:
    """The route is busy with earlier questions: this many are ahead of this one."""

    ahead: int


@dataclass(frozen=True, slots=True)
class Status:
    """The route's own word on its progress (a cloud server's status message): for the badge,
    never part of the answer."""

    text: str


@dataclass(frozen=True, slots=True)
class Token:
    text: str


@dataclass(frozen=True, slots=True)
class Citation:
    """`source` supports the answer up to offset `at` (the end of a sentence, or a marker)."""

    source: Source
    at: int
    explicit: bool  # the model wrote the [n] marker itself


@dataclass(frozen=True, slots=True)
class Finished:
    answer: str
    citations: tuple[Source, ...]
    metrics: AnswerMetrics
    history_id: int
    cancelled: bool
    grounded: float | None  # share of sentences a source supports; None for an empty answer
    sent: tuple[Message, ...] | None = None  # exactly what a cloud call sent (None: nothing)
    # No source supported a sentence of the model's answer: `answer` says the documents do not
    # answer the question, and what the model wrote is kept here, never shown as the answer.
    unsupported_draft: str | None = None


@dataclass(frozen=True, slots=True)
class InConversation:
    """The question is a turn of conversation `conversation_id`; retrieval read it as
    `standalone`; the `dropped` oldest turns did not fit the context and were left out."""

    conversation_id: int
    standalone: str
    dropped: int


@dataclass(frozen=True, slots=True)
class Failed:
    error: str
    history_id: int | None


@dataclass(frozen=True, slots=True)
class DraftReplaced:
    """The text streamed so far is not the answer: no source supports it, and the answer that
    Finished carries replaces it. A front end that showed the draft says so (`reason`)."""

    reason: str


DRAFT_REPLACED = "the sources do not support this draft; Docent's answer replaces it"


@dataclass(frozen=True, slots=True)
class AnswerRecorded:
    """An answer or a summary went into the history, whoever asked (the window, the CLI, an MCP
    client): the conversations and the month's spending may have changed."""

    history_id: int
    conversation_id: int | None
    cost_usd: float | None  # None: a cloud model the price table does not list


AnswerEvent = (
    SourcesFound
    | InConversation
    | RouteDecided
    | Waiting
    | Status
    | Token
    | Citation
    | DraftReplaced
    | Finished
    | Failed
)
