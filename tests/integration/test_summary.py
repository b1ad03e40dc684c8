"""Summaries with the real bundled model: a 60-page book's chapters each keep their fact, cited
by a page of that chapter; the stored summary opens again without the model; a changed
document's summary is gone."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from app.answering import (
    AnswerEvent,
    Citation,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    SourcesFound,
    Status,
    Token,
)
from app.answering.conversation import Conversation
from app.answering.summary import OVERVIEW, SummaryEvent, SummaryProgress
from app.bootstrap import Docent
from app.paths import Paths
from app.routing import NO_CLOUD
from tests.conftest import docent as cli
from tests.documents import BOOK_CHAPTERS, BOOK_PAGES_PER_CHAPTER, write_book_pdf, write_pdf
from tests.integration.conftest import index_all, opened, run
from tests.integration.test_cloud_route import configure


async def summarize(docent: Docent, path: Path) -> list[SummaryEvent]:
    (document,) = await docent.library.match_documents([str(path)])
    job = await docent.desk.summary(document.id)
    return [event async for event in job.run()]


def test_a_60_page_book_is_summarized_chapter_by_chapter_with_its_pages(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[SummaryEvent], list[SummaryEvent], float]:
        async with opened(embeddings=False) as docent:
            book = write_book_pdf(tmp_path / "book.pdf")
            await index_all(docent, [book])
            made = await summarize(docent, book)
            started = time.perf_counter()
            again = await summarize(docent, book)
            return made, again, time.perf_counter() - started

    made, again, reopened_s = run(scenario())

    progress = [e for e in made if isinstance(e, SummaryProgress)]
    assert [(p.step, p.steps) for p in progress] == [(n, 7) for n in range(1, 8)]
    assert progress[0].what == "Chapter 1: The Harbour Lighthouse (pages 1–10)"
    assert progress[-1].what == "overview"
    route = next(e for e in made if isinstance(e, RouteDecided))
    assert route.route == "local"
    finished = made[-1]
    assert isinstance(finished, Finished)
    assert not finished.cancelled
    summary = finished.answer
    streamed = "".join(e.text for e in made if isinstance(e, Token))
    citations = [e for e in made if isinstance(e, Citation)]
    # The summary is the streamed text with a page's [n] closing each sentence it supports, as
    # an answer is (the window's chips, the history, --json and MCP all show these).
    assert re.sub(r" ?\[\d+\]", "", summary) == streamed.strip()
    markers = {int(number) for number in re.findall(r"\[(\d+)\]", summary)}
    assert markers == {c.source.number for c in citations}

    # Each chapter's part of the summary (its title line up to the next title) names its fact,
    # and every page it cites lies in that chapter (citation offsets count in the streamed text).
    summary = streamed
    starts = [summary.index(title) for title, _, _ in BOOK_CHAPTERS]
    ends = [*starts[1:], summary.index(f"\n{OVERVIEW}: ")]
    for number, ((title, fact, _), start, end) in enumerate(
        zip(BOOK_CHAPTERS, starts, ends, strict=True)
    ):
        surname = fact.split(" by ")[-1].split(",")[0].split()[-1].rstrip(".")
        part = summary[start:end]
        assert surname in part, f"{title}: {surname} missing from {part!r}"
        pages = {c.source.page for c in citations if start <= c.at <= end}
        first = number * BOOK_PAGES_PER_CHAPTER + 1
        assert pages, f"{title}: nothing cited in {part!r}"
        assert pages <= set(range(first, first + BOOK_PAGES_PER_CHAPTER)), (title, pages)
    assert {c.page for c in finished.citations} == {c.source.page for c in citations}
    assert finished.metrics.prompt_tokens > 1000

    # Opening it again replays the stored summary: no model call, the same text and pages.
    assert isinstance(again[0], SourcesFound)
    assert [e.route for e in again if isinstance(e, RouteDecided)] == ["cache"]
    replayed = again[-1]
    assert isinstance(replayed, Finished)
    assert replayed.answer == finished.answer
    assert replayed.citations == finished.citations
    assert replayed.metrics.prompt_tokens == 0
    assert reopened_s < 1.0
    print(f"summary of 60 pages: {finished.metrics.total_s:.1f} s; reopened in {reopened_s:.3f} s")


def test_a_changed_document_loses_its_stored_summary(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        async with opened(embeddings=False) as docent:
            report = write_pdf(tmp_path / "report.pdf")
            await index_all(docent, [report])
            (document,) = await docent.library.match_documents([str(report)])
            job = await docent.desk.summary(document.id)
            [event async for event in job.run()]
            stored = (await docent.desk.summary(document.id)).estimate.stored
            write_pdf(report, [("Only section", "The archive moved to Lisbon in 2019.")])
            await index_all(docent, [report])
            (changed,) = await docent.library.match_documents([str(report)])
            after = await docent.desk.summary(changed.id)
            left = await docent.library.read(
                lambda store: store.db.execute("SELECT count(*) FROM summaries").fetchone()[0]
            )
            return stored, after.estimate.stored, left == 0

    stored, stored_after_change, none_left = run(scenario())
    assert stored
    assert not stored_after_change
    assert none_left


def test_questions_asking_for_a_summary_reach_the_summarizer(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[AnswerEvent], list[AnswerEvent]]:
        async with opened(embeddings=False) as docent:
            book = write_book_pdf(tmp_path / "book.pdf", BOOK_CHAPTERS[:3])
            await index_all(docent, [book, write_pdf(tmp_path / "report.pdf")])
            (document,) = await docent.library.match_documents([str(book)])
            answerer = await docent.desk.answerer()
            chapter = [e async for e in answerer.answer("总结第三章", [document.id])]
            unscoped = [e async for e in answerer.answer("What is this document about?")]
            return chapter, unscoped

    chapter, unscoped = run(scenario())
    statuses = [e.text for e in chapter if isinstance(e, Status)]
    assert statuses == ["summarizing 1 of 1: Chapter 3: The Valley Railway (pages 21–30)"]
    finished = chapter[-1]
    assert isinstance(finished, Finished)
    assert "Okafor" in finished.answer
    assert finished.citations
    assert {c.page for c in finished.citations} <= set(range(21, 31))
    # Two documents and none chosen: which one is meant cannot be guessed.
    assert unscoped == [
        Failed("Which document? Choose the one to summarize (tick it, or pass --doc).", None)
    ]


def test_the_summarize_command_estimates_streams_and_refuses_bad_input(tmp_path: Path) -> None:
    book = write_book_pdf(tmp_path / "book.pdf", BOOK_CHAPTERS[:2])
    assert cli("index", "--no-embed", str(book)).returncode == 0

    estimated = cli("summarize", "book.pdf", "--estimate", "--json")
    assert estimated.returncode == 0, estimated.stderr
    plan = json.loads(estimated.stdout)["estimate"]
    assert (plan["steps"], plan["stored"], plan["cloud"]) == (3, False, [])
    assert plan["prompt_tokens"] > 500

    made = cli("summarize", "book.pdf", "--chapter", "2")
    assert made.returncode == 0, made.stderr
    assert "[1/1: Chapter 2: The Hillside Orchard (pages 11–20)]" in made.stderr
    summary, _, rest = made.stdout.partition("\nPages cited: ")
    assert "Quillan" in summary
    pages = rest.splitlines()[0].split(", ")
    assert pages
    assert all(11 <= int(page) <= 20 for page in pages)

    for arguments, error in (
        (["nothing.pdf"], "docent: no indexed document matches 'nothing.pdf' (see `docent docs`)"),
        (["book.pdf", "--chapter", "9"], "docent: the document has no chapter 9 (its sections: "),
        (["book.pdf", "--route", "cloud"], f"docent: {NO_CLOUD}"),
    ):
        refused = cli("summarize", *arguments)
        assert refused.returncode != 0
        assert error in refused.stderr
        assert "Traceback" not in refused.stderr


def test_a_cloud_route_is_priced_before_and_after_and_privacy_can_refuse_it(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    configure(isolated_paths, llama_server)  # llama.cpp's server as the provider, priced
    book = write_book_pdf(tmp_path / "book.pdf", BOOK_CHAPTERS[:2])
    assert cli("index", "--no-embed", str(book)).returncode == 0

    estimated = json.loads(cli("summarize", "book.pdf", "--estimate", "--json").stdout)
    plan = estimated["estimate"]
    (cloud,) = plan["cloud"]
    assert cloud["model"] == "llama/qwen-mini"
    expected = (plan["prompt_tokens"] * 100.0 + plan["completion_tokens"] * 200.0) / 1e6
    assert cloud["cost_usd"] == pytest.approx(expected)

    made = cli("summarize", "book.pdf", "--route", "cloud", "--json")
    assert made.returncode == 0, made.stderr
    result = json.loads(made.stdout)
    assert (result["route"]["route"], result["route"]["model"]) == ("cloud", "llama/qwen-mini")
    assert "Brask" in result["summary"]
    metrics = result["metrics"]
    assert metrics["prompt_tokens"] <= plan["prompt_tokens"]  # the estimate is an upper bound
    assert metrics["cost_usd"] == pytest.approx(
        (metrics["prompt_tokens"] * 100.0 + metrics["completion_tokens"] * 200.0) / 1e6
    )
    assert 0 < metrics["cost_usd"] <= cloud["cost_usd"]

    settings = json.loads(isolated_paths.settings_file.read_text())
    settings["routing"] = {"privacy": "never"}
    isolated_paths.settings_file.write_text(json.dumps(settings))
    refused = cli("summarize", "book.pdf", "--route", "cloud")
    assert refused.returncode == 1
    assert "docent: privacy is set to never send anything to the cloud" in refused.stderr
    never = json.loads(cli("summarize", "book.pdf", "--estimate", "--json").stdout)
    assert never["estimate"]["cloud"] == []


def test_a_summary_asked_in_a_conversation_stays_in_it(tmp_path: Path) -> None:
    """The first question of a conversation asks for a summary: the conversation is created, the
    summary is its turn on reopening, and a follow-up answer joins the same conversation."""

    async def scenario() -> tuple[list[AnswerEvent], int | None, list[dict]]:
        async with opened(embeddings=False) as docent:
            book = write_book_pdf(tmp_path / "book.pdf", BOOK_CHAPTERS[:2])
            await index_all(docent, [book])
            (document,) = await docent.library.match_documents([str(book)])
            answerer = await docent.desk.answerer()
            conversation = Conversation()
            summary = [
                e
                async for e in answerer.answer(
                    "总结第二章", [document.id], None, None, conversation
                )
            ]
            follow_up = "Who bred the golden apple?"
            [_ async for _ in answerer.answer(follow_up, [document.id], None, None, conversation)]
            assert conversation.id is not None
            kept = await docent.library.conversation(conversation.id)
            assert kept is not None
            return summary, conversation.id, kept.entries

    summary, conversation_id, rows = run(scenario())
    assert InConversation(conversation_id, "总结第二章", 0) in summary  # type: ignore[arg-type]
    finished = summary[-1]
    assert isinstance(finished, Finished)
    assert [row.question for row in rows] == ["总结第二章", "Who bred the golden apple?"]
    assert rows[0].answer == finished.answer
    assert rows[0].turn is None  # shown when reopened; too long for the next prompt
    assert rows[1].turn is not None
