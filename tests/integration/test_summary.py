"""Summaries with the real bundled model: a 60-page book's chapters each keep their fact, cited
by a page of that chapter; the stored summary opens again without the model; a changed
document's summary is gone."""

from __future__ import annotations

import time
from pathlib import Path

from app.answering import Citation, Finished, RouteDecided, SourcesFound, Token
from app.answering.summary import OVERVIEW, SummaryEvent, SummaryProgress
from app.bootstrap import Docent
from tests.documents import BOOK_CHAPTERS, BOOK_PAGES_PER_CHAPTER, write_book_pdf, write_pdf
from tests.integration.conftest import index_all, opened, run


async def summarize(docent: Docent, path: Path) -> list[SummaryEvent]:
    summarizer = await docent.summarizer()
    (document,) = await docent.library.match_documents([str(path)])
    plan = await summarizer.plan(document.id)
    return [event async for event in summarizer.summarize(plan)]


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
    assert summary == "".join(e.text for e in made if isinstance(e, Token)).strip()
    citations = [e for e in made if isinstance(e, Citation)]

    # Each chapter's part of the summary (its title line up to the next title) names its fact,
    # and every page it cites lies in that chapter.
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
    assert replayed.answer == summary
    assert replayed.citations == finished.citations
    assert replayed.metrics.prompt_tokens == 0
    assert reopened_s < 1.0
    print(f"summary of 60 pages: {finished.metrics.total_s:.1f} s; reopened in {reopened_s:.3f} s")


def test_a_changed_document_loses_its_stored_summary(tmp_path: Path) -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        async with opened(embeddings=False) as docent:
            report = write_pdf(tmp_path / "report.pdf")
            await index_all(docent, [report])
            summarizer = await docent.summarizer()
            (document,) = await docent.library.match_documents([str(report)])
            plan = await summarizer.plan(document.id)
            [event async for event in summarizer.summarize(plan)]
            stored = await summarizer.is_stored(plan)
            write_pdf(report, [("Only section", "The archive moved to Lisbon in 2019.")])
            await index_all(docent, [report])
            (changed,) = await docent.library.match_documents([str(report)])
            after = await summarizer.plan(changed.id)
            left = await docent.library.read(
                lambda store: store.db.execute("SELECT count(*) FROM summaries").fetchone()[0]
            )
            return stored, await summarizer.is_stored(after), left == 0

    stored, stored_after_change, none_left = run(scenario())
    assert stored
    assert not stored_after_change
    assert none_left
