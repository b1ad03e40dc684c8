import re
from pathlib import Path

import pytest

from app.cjk import estimate_tokens
from app.documents.chunking import MAX_TOKENS, chunk_pages, split_long, unwrap
from app.documents.parse import LONGEST_RUN, PageText, break_long_runs, open_document


def page(number: int, *blocks: tuple[str, str | None], label: str | None = None) -> PageText:
    return PageText(number, label or str(number), tuple(blocks))


def test_chunks_keep_page_label_and_heading() -> None:
    pages = [
        page(1, ("Intro text about the report.", "Introduction"), label="i"),
        page(2, ("Retention\nrules apply.", "Retention"), ("More retention.", "Retention")),
    ]
    chunks = list(chunk_pages(pages))
    assert [(c.ordinal, c.page, c.page_label, c.heading) for c in chunks] == [
        (0, 1, "i", "Introduction"),
        (1, 2, "2", "Retention"),
    ]
    assert chunks[1].text == "Retention rules apply.\nMore retention."


def test_a_new_heading_starts_a_new_chunk_on_the_same_page() -> None:
    chunks = list(chunk_pages([page(1, ("Alpha body.", "A"), ("Beta body.", "B"))]))
    assert [(c.heading, c.text) for c in chunks] == [("A", "Alpha body."), ("B", "Beta body.")]


def test_long_paragraphs_split_at_sentences_within_the_limit() -> None:
    sentence = "The ledger balances every account against the audit trail each quarter. "
    chunks = list(chunk_pages([page(1, (sentence * 60, None))]))
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= MAX_TOKENS for c in chunks)
    assert all(c.text.endswith(".") for c in chunks)
    assert "".join(c.text.replace(" ", "") for c in chunks) == (sentence * 60).replace(" ", "")


def test_chinese_without_spaces_is_split_by_characters() -> None:
    text = "员工档案必须保存十年" * 100  # 1,000 CJK characters, no punctuation
    pieces = split_long(text)
    assert len(pieces) > 1
    assert "".join(pieces) == text
    assert all(estimate_tokens(piece) <= MAX_TOKENS for piece in pieces)


def test_unwrap_joins_lines_without_spaces_between_cjk_characters() -> None:
    assert unwrap("员工档案\n必须保存") == "员工档案必须保存"
    assert unwrap("records must\nbe kept") == "records must be kept"


def test_unwrap_rejoins_words_hyphenated_across_lines() -> None:
    assert unwrap("the reten-\ntion policy") == "the retention policy"
    assert unwrap("post-\nWar and 2024-\n2025") == "post- War and 2024- 2025"


def test_a_short_heading_block_stays_with_its_paragraph() -> None:
    body = "Customer invoices must be retained for seven years. " * 15
    chunks = list(chunk_pages([page(1, ("Section 3", "Section 3"), (body, "Section 3"))]))
    assert chunks[0].text.startswith("Section 3\nCustomer invoices")


def test_empty_pages_yield_no_chunks_but_keep_ordinals_dense() -> None:
    chunks = list(chunk_pages([page(1, ("One.", None)), page(2), page(3, ("Three.", None))]))
    assert [(c.ordinal, c.page) for c in chunks] == [(0, 1), (1, 3)]


def test_plain_text_section_titles_become_headings(tmp_path: Path) -> None:
    """reStructuredText and Setext titles: a changelog's versions are its only structure."""
    changelog = tmp_path / "CHANGES.rst"
    changelog.write_text(
        "=========\nChangelog\n=========\n\n`0.54.0`_ (2025-03-30)\n+++++++++++++++++++\n\n"
        "* New Style.GWOYEU.\n\n0.53.0\n------\n\n* Pyinstaller support.\n\n"
        "Plain prose with a --- rule inside stays prose.\n",
        encoding="utf-8",
    )
    with open_document(changelog) as document:
        chunks = list(chunk_pages(document.pages()))
    assert [(c.heading, c.text.splitlines()[0]) for c in chunks] == [
        ("Changelog", "Changelog"),
        ("0.54.0 (2025-03-30)", "0.54.0 (2025-03-30)"),
        ("0.53.0", "0.53.0"),
    ]
    assert "Style.GWOYEU" in chunks[1].text
    assert chunks[2].text.endswith("Plain prose with a --- rule inside stays prose.")


@pytest.mark.parametrize(
    "text",
    ["<>" * 30_000, ">" * 20_000 + " deep quote", "1<2>3" * 12_000, "<" * 20_000, "a->b" * 15_000],
)
def test_runs_of_angle_brackets_are_cut_like_any_run_and_tags_stay_whole(text: str) -> None:
    """MuPDF lays out a run without a break point in quadratic time: in markup, `<` and `>` that
    open no tag are text and are cut (they were taken for tags, "<>" for an empty one, and
    never cut); a real tag, a long data: URI included, stays whole."""
    tag = '<img src="data:image/png;base64,' + "A" * 5000 + '">'
    cut = break_long_runs(f"<p>{text}</p>{tag}", markup=True)
    assert cut.endswith(tag)
    runs = re.sub(r"<[A-Za-z/!?][^<>]*>", " ", cut.removesuffix(tag)).split()
    assert max(len(run) for run in runs) <= LONGEST_RUN
    assert cut.replace("\n", "").removesuffix(tag) == f"<p>{text}</p>"  # nothing lost
