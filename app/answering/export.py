"""Answers as Markdown, for the clipboard (an answer with its sources) and for export (a whole
conversation): what was asked, the answer with its [n] marks, the passages they point to, and
how it was answered. Copied elsewhere, an answer keeps its evidence. A question asked again
(Retry, the other route) has several versions; the export keeps the one the conversation kept,
as the window shows it, and says how many others there were."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.answering.conversation import grouped
from app.answering.metrics import AnswerMetrics
from app.index import HistoryEntry


def sources_markdown(citations: Sequence[dict[str, Any]]) -> str:
    """ "Sources:" and one line per cited passage, "[1] report.pdf, p. 2 — Heading", in number
    order; empty without citations."""
    if not citations:
        return ""
    ordered = sorted(citations, key=lambda citation: int(citation["number"]))
    lines = [f"- [{citation['number']}] {citation['where']}" for citation in ordered]
    return "Sources:\n\n" + "\n".join(lines)


def answer_markdown(answer: str, citations: Sequence[dict[str, Any]]) -> str:
    """An answer as it is copied: its text, then its sources."""
    sources = sources_markdown(citations)
    return f"{answer.strip()}\n\n{sources}" if sources else answer.strip()


def conversation_markdown(title: str, entries: Sequence[HistoryEntry]) -> str:
    """A conversation as one Markdown document: a section per question with the version the
    conversation kept (the one the window shows), its answer (or why there is none), its
    sources, how it was answered (the CLI's footer line) and how many other versions it had."""
    parts = [f"# {_one_line(title)}"]
    for turn in grouped(entries):
        entry = turn.versions[turn.shown]
        answer = entry.answer or entry.error or f"[{entry.status}]"
        parts.append(f"## {_one_line(entry.question)}")
        if entry.standalone and entry.standalone != entry.question:
            parts.append(f"*Searched for: {_one_line(entry.standalone)}*")
        parts.append(answer_markdown(answer, entry.citations))
        footer = f"*{AnswerMetrics.from_record(entry).footer()} · {entry.asked_at}*"
        others = len(turn.versions) - 1
        if others:
            # Which one was kept matters to a reader comparing: say its place among them.
            plural = "answer" if others == 1 else "answers"
            footer += (
                f"\n\n*Answer {turn.shown + 1} of {len(turn.versions)} "
                f"({others} other {plural} not exported)*"
            )
        parts.append(footer)
    return "\n\n".join(parts) + "\n"


def _one_line(text: str) -> str:
    """A heading stays one line, whatever the question held."""
    return " ".join(text.split())
