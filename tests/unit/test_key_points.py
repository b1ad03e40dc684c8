"""A summary's key points (app/answering/key_points.py): the section's own sentences that state
the facts the model's sentences left out, chosen by what the document keeps coming back to."""

import re

from app.answering.events import Source
from app.answering.key_points import Prominence, as_line, key_points
from app.answering.run import CitedText


def page(number: int, text: str) -> Source:
    return Source(
        number, number, 1, "guide.pdf", "/guide.pdf", number, str(number), None, text, 1.0
    )


HEADER = "Packaging Guide 2024 / page"
TOOLS = page(
    2,
    f"{HEADER} 2\n"
    "Before you start, install the tools below.\n"
    "• lintian - checks a built package for common mistakes and explains each one.\n"
    "• gpc - the GNU Pascal compiler, for programs written in Pascal with GNU Pascal.\n"
    "• quilt - keeps your changes to the upstream source as a stack of patches.\n"
    "(see lintian(1) and quilt(1))\n"
    "| tool | version | size |\n",
)
LATER = [
    page(
        3, f"{HEADER} 3\nRun lintian on the .changes file.\nRefresh the patches with quilt.\nDone."
    ),
    page(4, f"{HEADER} 4\nLintian reports errors and warnings.\nQuilt pops every patch.\nDone."),
    page(5, f"{HEADER} 5\nA package that lintian accepts may still need review.\nDone."),
]
DOCUMENT = Prominence.of([TOOLS, *LATER])


def test_the_points_state_what_the_summary_left_out_in_reading_order_each_from_its_page() -> None:
    said = "This section lists the tools a packager installs, among them lintian."
    points = key_points([TOOLS], said, DOCUMENT)
    texts = [p.text for p in points]
    # quilt, which the document keeps using, is a point; lintian was said already.
    assert any("quilt" in text for text in texts)
    assert not any(text.startswith("lintian") for text in texts)
    assert texts == sorted(texts, key=TOOLS.text.index)  # reading order
    for point in points:
        assert point.source == TOOLS
        assert point.text in TOOLS.text  # a quote: it cannot state what the page does not


def test_a_tool_the_document_keeps_using_outweighs_one_named_once() -> None:
    """gpc's line names more things (GNU, Pascal, gpc) than lintian's; lintian is what the
    manual comes back to."""
    (first, *_) = key_points([TOOLS], "", DOCUMENT)
    assert first.text.startswith("lintian")


def test_running_headers_references_and_table_rows_are_never_points() -> None:
    # The header whatever its page number, and the line most pages end with.
    assert DOCUMENT.running == {"Packaging Guide # / page #", "Done."}
    texts = [p.text for p in key_points([TOOLS, *LATER], "", DOCUMENT)]
    assert texts
    assert not any(HEADER in t or t.startswith("(") or "|" in t for t in texts)


def test_a_sentence_going_on_over_the_page_is_no_point_but_a_list_item_is() -> None:
    notice = "The NOTICE file of Apache projects is for information only and"
    pages = [
        page(1, f"* Fixed a crash in the Parser module of Docent 2.1\n\n{notice}"),
        page(2, "must not change the License of the Apache projects."),
    ]
    texts = [p.text for p in key_points(pages[:1], "", Prominence.of(pages))]
    assert texts == ["Fixed a crash in the Parser module of Docent 2.1"]
    # A page ending so, when the next does not go on: the last item of a changelog's entry.
    pages[1] = page(2, "Docent 2.0 added the Parser module of Apache projects.")
    texts = [p.text for p in key_points(pages[:1], "", Prominence.of(pages))]
    assert texts[-1] == notice


def test_nothing_is_quoted_when_the_summary_said_every_fact_already() -> None:
    said = " ".join(f"{tool} and GNU Pascal" for tool in ("lintian", "gpc", "quilt", "upstream"))
    assert key_points([TOOLS], said, DOCUMENT) == []


def test_chinese_sections_count_the_commands_they_name() -> None:
    pages = [
        page(1, "在你的开发环境中，最重要的软件包是 build-essential。它会安装编译器和 make 工具。"),
        page(2, "用 build-essential 和 debhelper 构建软件包。然后运行 lintian 检查。"),
    ]
    points = key_points(pages[:1], "", Prominence.of(pages))
    assert [p.text for p in points] == ["在你的开发环境中，最重要的软件包是 build-essential。"]


def test_a_quoted_point_is_cited_by_its_page_and_closed_as_a_sentence() -> None:
    written = CitedText("Tools  \nIt lists the tools.\n\n")
    (point, *_) = key_points([TOOLS], "", DOCUMENT)
    token, citation = written.quote(as_line(point), point.source)
    assert (
        token.text
        == "- lintian - checks a built package for common mistakes and explains each one.\n"
    )
    assert citation.source == TOOLS
    assert citation.at == len(written.text.rstrip())
    assert re.search(r"explains each one \[2\]\.$", written.marked())
    changes = [page(1, "* Dropped support for Python 3.7 and PyPy 3.8")]
    item = key_points(changes, "", Prominence.of(changes))
    assert [as_line(p) for p in item] == ["- Dropped support for Python 3.7 and PyPy 3.8.\n"]
