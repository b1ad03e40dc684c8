"""Summaries without a model: recognising a summary request and its scope, cutting a document
into sections (outline, page windows, chapters), and the estimate said before starting."""

from __future__ import annotations

import pytest

from app.answering.sections import PartNotFound, page_sources, select_part, split
from app.answering.summary import WRITTEN_SHARE, SummaryPlan, estimate, summary_prompt
from app.answering.summary_request import SummaryRequest, chapter_request, summary_request
from app.catalog import Speed
from app.cjk import estimate_tokens
from app.index import DocumentInfo, StoredChunk

WHOLE = SummaryRequest()


@pytest.mark.parametrize(
    ("question", "request_"),
    [
        ("What is this document about?", WHOLE),
        ("what's the book about", WHOLE),
        ("What is this about?", WHOLE),
        ("Summarize this document.", WHOLE),
        ("summarise", WHOLE),
        ("Give me an overview of the report", WHOLE),
        ("tl;dr", WHOLE),
        ("Summarize chapter 3", SummaryRequest(chapter=3)),
        ("summarise chapter three please", SummaryRequest(chapter=3)),
        ("What does section 2 say?", SummaryRequest(chapter=2)),
        ("Summarize the chapter on budgets", SummaryRequest(title="budgets")),
        ("这份文档讲了什么", WHOLE),
        ("这份文档讲了什么？", WHOLE),
        ("这本书是关于什么", WHOLE),
        ("总结一下", WHOLE),
        ("总结第三章", SummaryRequest(chapter=3)),
        ("总结第十二章", SummaryRequest(chapter=12)),
        ("第3章讲了什么", SummaryRequest(chapter=3)),
    ],
)
def test_summary_requests_are_recognised_with_their_scope(
    question: str, request_: SummaryRequest
) -> None:
    assert summary_request(question) == request_


@pytest.mark.parametrize(
    "question",
    [
        "Summarize the refund policy",  # a topic: retrieval answers it
        "What is the refund policy about?",
        "How long are invoices kept?",
        "Summarise every section of the report in detail.",
        "总结第三章和第四章的区别",
        "这份文档里发票保存多久？",
    ],
)
def test_other_questions_are_left_to_answering(question: str) -> None:
    assert summary_request(question) is None


def test_a_chapter_is_named_by_number_or_by_words() -> None:
    assert chapter_request("3") == SummaryRequest(chapter=3)
    assert chapter_request("三") == SummaryRequest(chapter=3)
    assert chapter_request("The Railway") == SummaryRequest(title="The Railway")
    assert chapter_request(None) == chapter_request(" ") == WHOLE
    assert SummaryRequest(chapter=3).part == "chapter 3"
    assert WHOLE.part == ""


def chunk(number: int, page: int, heading: str | None, words: int = 40) -> StoredChunk:
    return StoredChunk(
        id=number,
        document_id=1,
        document_path="/docs/book.pdf",
        document_title="Book",
        ordinal=number,
        page=page,
        page_label=str(page),
        heading=heading,
        text=" ".join(f"word{page}x{i}" for i in range(words)),
    )


def test_pages_become_numbered_sources_and_headings_become_sections() -> None:
    chunks = [
        chunk(1, 1, None, 5),  # a title page: too short for a section of its own
        chunk(2, 2, "Chapter 1: Ships"),
        chunk(3, 2, "Chapter 1: Ships"),  # two chunks of one page: one source
        chunk(4, 3, "Chapter 1: Ships"),
        chunk(5, 3, "Chapter 2: Trains"),  # a page where a chapter starts
        chunk(6, 4, "Chapter 2: Trains"),
    ]
    sources = page_sources(chunks)
    assert [(s.number, s.page, s.heading) for s in sources] == [
        (1, 1, None),
        (2, 2, "Chapter 1: Ships"),
        (3, 3, "Chapter 1: Ships"),
        (4, 3, "Chapter 2: Trains"),
        (5, 4, "Chapter 2: Trains"),
    ]
    assert sources[1].text == f"{chunks[1].text}\n{chunks[2].text}"
    sections = split(sources, budget_tokens=2000)
    assert [s.title for s in sections] == ["Pages 1–3", "Chapter 2: Trains (pages 3–4)"]
    assert [len(s.sources) for s in sections] == [3, 2]


def test_a_long_section_is_cut_into_page_windows_within_the_budget() -> None:
    chunks = [chunk(n, n, "Appendix", words=100) for n in range(1, 11)]
    sections = split(page_sources(chunks), budget_tokens=700)
    assert all(section.tokens <= 700 for section in sections)
    assert len(sections) > 1
    assert [p.page for s in sections for p in s.sources] == list(range(1, 11))
    assert {s.heading for s in sections} == {"Appendix"}
    # A page longer than the whole budget is cut short rather than overflowing the context.
    (alone,) = split(page_sources([chunk(1, 1, None, words=2000)]), budget_tokens=300)
    assert alone.tokens <= 300


def book_sections() -> list:
    headings = ["Preface", "Chapter 1: Ships", "1.1 Sails", "Chapter 2: Trains", "Index"]
    chunks = [chunk(n, n, heading, words=300) for n, heading in enumerate(headings, start=1)]
    return split(page_sources(chunks), budget_tokens=2000)


def test_a_chapter_is_found_by_number_with_its_subsections_or_by_its_words() -> None:
    sections = book_sections()
    assert [s.heading for s in select_part(sections, 1, None)] == [
        "Chapter 1: Ships",
        "1.1 Sails",
    ]
    assert [s.heading for s in select_part(sections, 2, None)] == ["Chapter 2: Trains"]
    assert [s.heading for s in select_part(sections, None, "trains")] == ["Chapter 2: Trains"]
    with pytest.raises(PartNotFound, match=r"no chapter 7 \(its sections: Preface; Chapter 1"):
        select_part(sections, 7, None)


def test_unnumbered_headings_are_counted_in_order() -> None:
    chunks = [chunk(n, n, h, words=300) for n, h in enumerate(["Ships", "Trains"], start=1)]
    sections = split(page_sources(chunks), budget_tokens=2000)
    assert [s.heading for s in select_part(sections, 2, None)] == ["Trains"]


def test_the_estimate_says_local_time_and_each_cloud_models_cost() -> None:
    document = DocumentInfo(1, "/docs/book.pdf", "Book", "pdf", "ab", 1, 1, 5, 5, 5, None, "", 0, 0)
    sections = tuple(book_sections())
    pages = [page for section in sections for page in section.sources]
    plan = SummaryPlan(document, WHOLE, sections, tuple(pages))
    assert plan.steps == len(plan.sections) + 1  # and the overview
    prices = {"cheap": (1.0, 2.0)}

    def cost(model: str, prompt: int, completion: int) -> float | None:
        if model not in prices:
            return None
        per_input, per_output = prices[model]
        return (prompt * per_input + completion * per_output) / 1_000_000

    found = estimate(plan, Speed(prefill_tok_s=100.0, decode_tok_s=10.0), ["cheap", "new"], cost)
    system = estimate_tokens(summary_prompt())
    read = plan.prompt_tokens - (plan.steps - 1) * system  # the system prompt's KV is reused
    expected_s = read / 85.0 + plan.completion_tokens * WRITTEN_SHARE / 10.0
    assert found.local_s == pytest.approx(expected_s)
    assert found.describe_local().startswith("about ")
    assert [c.model for c in found.cloud] == ["cheap", "new"]
    assert found.cloud[0].cost_usd == pytest.approx(
        (plan.prompt_tokens + 2 * plan.completion_tokens) / 1_000_000
    )
    assert found.cloud[1].cost_usd is None  # not in the price table: unknown, not free
    unmeasured = estimate(plan, None, [], None, stored=False)
    assert unmeasured.describe_local() == "time unknown (run the speed check in Settings)"
    assert estimate(plan, None, [], None, stored=True).describe_local() == "stored: opens at once"
