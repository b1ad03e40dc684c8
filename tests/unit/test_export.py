"""Answers and conversations as Markdown keep their evidence: sources in number order, the
follow-up's search, how each was answered."""

from __future__ import annotations

from app.answering.export import answer_markdown, conversation_markdown
from app.index import HistoryEntry


def entry(
    question: str, answer: str, citations: list[dict[str, object]], **extra: object
) -> HistoryEntry:
    fields: dict[str, object] = {
        "question": question,
        "scope": [],
        "answer": answer,
        "status": "finished",
        "error": None,
        "route": "local",
        "model": "qwen2.5-0.5b",
        "reason": "simple question",
        "citations": citations,
        "retrieval_s": 0.01,
        "ttft_s": 0.4,
        "total_s": 2.0,
        "prompt_tokens": 500,
        "completion_tokens": 40,
        "tokens_per_s": 25.0,
        "cost_usd": 0.0,
        "grounded": 1.0,
        "id": 1,
        "asked_at": "2026-12-05T21:30:00+00:00",
    }
    return HistoryEntry(**(fields | extra))  # type: ignore[arg-type]


def test_a_copied_answer_lists_its_sources_in_number_order() -> None:
    citations = [
        {"number": 2, "where": "policy.pdf, p. 4 — Deletion"},
        {"number": 1, "where": "policy.pdf, p. 2 — Retention"},
    ]
    assert answer_markdown("Seven years [1], then deleted [2].\n", citations) == (
        "Seven years [1], then deleted [2].\n\n"
        "Sources:\n\n"
        "- [1] policy.pdf, p. 2 — Retention\n"
        "- [2] policy.pdf, p. 4 — Deletion"
    )
    assert answer_markdown("The documents do not say.", []) == "The documents do not say."


def test_a_conversation_exports_each_turn_with_its_search_sources_and_route() -> None:
    first = entry(
        "How long are\nrecords kept?", "Seven years [1].", [{"number": 1, "where": "a.pdf, p. 2"}]
    )
    failed = entry(
        "And backups?",
        "",
        [],
        status="failed",
        error="the local model crashed",
        standalone="How long are records kept? And backups?",
        cost_usd=None,
    )
    markdown = conversation_markdown("How long are records kept?", [first, failed])
    sections = markdown.split("\n\n## ")
    assert sections[0] == "# How long are records kept?"
    assert sections[1].startswith("How long are records kept?\n\nSeven years [1].\n\nSources:")
    assert "*route: local (qwen2.5-0.5b) · why: simple question · TTFT 0.40 s" in sections[1]
    assert sections[2].startswith(
        "And backups?\n\n*Searched for: How long are records kept? And backups?*\n\n"
        "the local model crashed\n\n*route:"
    )
    assert "cost unknown" in sections[2]
    assert markdown.endswith("+00:00*\n")


def test_a_question_asked_again_exports_the_version_the_conversation_kept() -> None:
    """A retry is another row with the same question: the export shows the kept one (the one
    the window shows and the next question continued), once, and says the others exist."""
    local = entry("Why?", "Local answer.", [], id=1, turn={"kept": False})
    cloud = entry("Why?", "Cloud answer.", [], id=2, route="cloud", turn={"kept": True})
    failed = entry("Why?", "", [], id=3, status="failed", error="the cloud timed out")
    then = entry("And then?", "Then this.", [], id=4, turn={})
    retried = entry("And then?", "Then that.", [], id=5, turn={})
    markdown = conversation_markdown("Why?", [local, cloud, failed, then, retried])
    sections = markdown.split("\n\n## ")
    assert len(sections) == 3  # the title and one section per question, not per version
    assert sections[1].startswith("Why?\n\nCloud answer.\n\n*route: cloud")
    assert "Local answer." not in markdown
    assert "the cloud timed out" not in markdown
    assert sections[1].endswith("*Answer 2 of 3 (2 other answers not exported)*")
    # No mark: the newest version with a turn is the one the conversation continued.
    assert sections[2].startswith("And then?\n\nThen that.")
    assert sections[2].endswith("*Answer 2 of 2 (1 other answer not exported)*\n")
    # A single version says nothing about versions.
    assert "not exported" not in conversation_markdown("Why?", [local])
