"""The table step: tables read back from the sources as the Office reader writes them, one SELECT
the model wrote run over them (and nothing else), the result with the rows it came from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest

from app.answering.events import Source
from app.answering.tables import (
    RowRef,
    Table,
    find_tables,
    is_table_question,
    query_prompt,
    rest_of_tables,
    run_query,
)
from app.documents.chunking import chunk_pages
from app.documents.office import read_docx, read_xlsx
from app.documents.parse import PageText
from app.index import StoredChunk
from tests.documents import write_docx, write_xlsx

LEAGUE = [
    ("Team", "Played", "Goals scored", "Points", "Share"),
    ("Hajduk", 30, 55, 61, "12.5%"),
    ("Dinamo | Zagreb", 30, 68, 70, "20%"),
    ("Rijeka", 30, 49, 58, "11.0%"),
    ("Osijek", 30, "1,041", 44, None),
    ("Istra", 30, 25, 25, "5%"),
]


def sources_of(units: Sequence[PageText], document: str) -> list[Source]:
    """The chunks Docent indexes for these pages, as retrieval hands them to the answer."""
    return [
        Source(
            number=ordinal + 1,
            chunk_id=100 + ordinal,
            document_id=1,
            document=document,
            path=f"/docs/{document}",
            page=chunk.page,
            page_label=chunk.page_label,
            heading=chunk.heading,
            text=chunk.text,
            score=1.0,
        )
        for ordinal, chunk in enumerate(chunk_pages(units))
    ]


def sheet_sources(path: Path, rows: Sequence[Sequence[object]], title: str) -> list[Source]:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for row in rows:
        sheet.append(list(row))
    workbook.save(path)
    read = read_xlsx(path)
    pages = [PageText(n, unit.label, tuple(unit.blocks)) for n, unit in enumerate(read.units, 1)]
    return sources_of(pages, path.name)


@pytest.fixture
def league(tmp_path: Path) -> list[Table]:
    return find_tables(sheet_sources(tmp_path / "league.xlsx", LEAGUE, "League"))


def test_a_sheet_is_read_back_with_typed_columns_and_where_each_row_came_from(
    tmp_path: Path,
) -> None:
    read = read_xlsx(write_xlsx(tmp_path / "harbour.xlsx"))
    pages = [PageText(n, unit.label, tuple(unit.blocks)) for n, unit in enumerate(read.units, 1)]
    sources = sources_of(pages, "harbour.xlsx")
    assert sources[1].text.startswith("| Item | Cost in euros | Year |\n|---|---|---|\n")

    staff, budget = find_tables(sources)
    assert (staff.name, staff.described) == ("staff", "the sheet 'Staff' of harbour.xlsx")
    assert [(c.name, c.header, c.type) for c in budget.columns] == [
        ("item", "Item", "TEXT"),
        ("cost_in_euros", "Cost in euros", "INTEGER"),
        ("year", "Year", "INTEGER"),
    ]
    assert budget.rows[2] == ("Harbour crane", 185_000, 2026)
    assert budget.origins[2] == RowRef(2, 3, "Harbour crane", "Budget A1:C4")


def test_numbers_as_people_write_them_are_numbers_and_a_mixed_column_stays_text(
    league: list[Table],
) -> None:
    (table,) = league
    types = {column.name: column.type for column in table.columns}
    assert types == {
        "team": "TEXT",
        "played": "INTEGER",
        "goals_scored": "INTEGER",
        "points": "INTEGER",
        "share": "REAL",
    }
    assert [row[2] for row in table.rows] == [55, 68, 49, 1041, 25]  # "1,041"
    assert [row[4] for row in table.rows] == [12.5, 20, 11.0, None, 5]  # percent as written
    assert table.rows[1][0] == "Dinamo | Zagreb"  # the reader's escaped pipe is a character


def test_the_chunks_of_a_long_sheet_are_one_table_in_the_sheet_order(tmp_path: Path) -> None:
    rows = [("Name", "Score"), *((f"player {i}", i) for i in range(150))]
    sources = sheet_sources(tmp_path / "scores.xlsx", rows, "Scores")
    assert len(sources) > 2  # the reader cut the sheet, its header repeated in each chunk
    ranked = [sources[-1], *sources[:-1]]
    renumbered = [
        Source(n, s.chunk_id, 1, s.document, s.path, s.page, s.page_label, s.heading, s.text, 1)
        for n, s in enumerate(ranked, 1)
    ]
    (table,) = find_tables(renumbered)
    assert [row[0] for row in table.rows] == [f"player {i}" for i in range(150)]
    assert table.origins[-1].source == 1  # the best-ranked chunk holds the sheet's last rows


def test_the_rest_of_a_sheet_is_its_other_chunks_not_another_sheets(tmp_path: Path) -> None:
    workbook = openpyxl.Workbook()
    scores = workbook.active
    scores.title = "Scores"
    scores.append(["Name", "Score"])
    for number in range(150):
        scores.append([f"player {number}", number])
    teams = workbook.create_sheet("Teams")
    teams.append(["Name", "Score"])  # the same header, another sheet
    teams.append(["Hajduk", 900])
    workbook.save(tmp_path / "scores.xlsx")
    read = read_xlsx(tmp_path / "scores.xlsx")
    pages = [PageText(n, unit.label, tuple(unit.blocks)) for n, unit in enumerate(read.units, 1)]
    stored = [
        StoredChunk(
            100 + n, 1, "/docs/scores.xlsx", "scores", n, c.page, c.page_label, c.heading, c.text
        )
        for n, c in enumerate(chunk_pages(pages))
    ]
    chosen = sources_of(pages, "scores.xlsx")[1:2]  # retrieval found one chunk of Scores

    rest = rest_of_tables(chosen, stored)
    assert {source.heading for source in rest} == {"Scores"}
    assert {source.number for source in rest} == {0}  # no citation may name them
    (table,) = find_tables([*chosen, *rest])
    assert len(table.rows) == 150
    answer = run_query("SELECT name FROM scores ORDER BY score DESC LIMIT 1", [table])
    assert answer is not None
    assert answer.result == "player 149"
    assert answer.sources == ()  # its row is in a chunk the prompt does not show
    assert answer.line.endswith("from the rows player 149 (Scores A101:B151)")


def test_sheets_of_one_name_in_two_workbooks_are_named_after_their_workbooks() -> None:
    text = "| Species | Count |\n|---|---|\n| setosa | 50 |"
    first = Source(1, 9, 1, "datasets.xlsx", "/d.xlsx", 1, "iris A1:B2", "iris", text, 1.0)
    second = replace(first, number=2, chunk_id=20, document_id=2, document="loadPivotTables.xlsx")
    other = replace(first, number=3, chunk_id=30, heading="quakes", page_label="quakes A1:B2")
    names = [table.name for table in find_tables([first, second, other])]
    assert names == ["datasets_iris", "loadpivottables_iris", "quakes"]


def test_a_totals_row_is_not_a_row_to_count_or_sum() -> None:
    text = (
        "| Row Labels | female | male |\n|---|---|---|\n| Adelie | 3475 | 4041.67 |\n"
        "| Gentoo | 4650 | 5500 |\n| Grand Total | 3900 | 4576.92 |"
    )
    source = Source(1, 9, 1, "p.xlsx", "/p.xlsx", 1, "pivot A3:C6", "pivot", text, 1.0)
    answer = run_query("SELECT count(*), sum(female) FROM pivot", find_tables([source]))
    assert answer is not None
    assert answer.result == "2, 8125"


def test_a_word_table_is_found_beside_prose_under_its_section(tmp_path: Path) -> None:
    read = read_docx(write_docx(tmp_path / "policy.docx"))
    pages = [PageText(n, unit.label, tuple(unit.blocks)) for n, unit in enumerate(read.units, 1)]
    (table,) = find_tables(sources_of(pages, "policy.docx"))
    assert table.described == "the table in 'Retention periods'"
    assert table.name == "retention_periods"
    assert table.rows == (
        ("Customer invoices", "7 years"),
        ("Supplier contracts", "12 years"),
        ("Visitor logs", "90 days"),
    )


def test_headers_become_names_sql_takes_unquoted(tmp_path: Path) -> None:
    rows = [("Order", "2024", "Cost (€)", "Cost (€)", "", "球队"), ("a", 1, 2, 3, 4, "b")]
    (table,) = find_tables(sheet_sources(tmp_path / "odd.xlsx", rows, "Select"))
    assert table.name == "select_"
    assert [column.name for column in table.columns] == [
        "order_",
        "column_2024",
        "cost",
        "cost_2",
        "column_5",
        "球队",
    ]
    answer = run_query("SELECT order_, column_2024 + cost_2, 球队 FROM select_", [table])
    assert answer is not None
    assert answer.values == (("a", 4, "b"),)


@pytest.mark.parametrize(
    "question",
    [
        "How many teams are there?",
        "What is the total cost?",
        "Which team had the most points?",
        "What is the difference between Hajduk and Rijeka?",
        "What was the average score?",
        "What is the combined weight of the casein chicks?",  # and superlatives: the tune set's
        "Which feed had the heaviest chick?",
        "How strong was the strongest quake?",
        "Which island is the oldest penguin from?",
        "总共有多少支球队？",
        "哪个球队积分最多？",
        "两队相差几分？",
    ],
)
def test_questions_that_compute_over_rows_are_table_questions(question: str) -> None:
    assert is_table_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "Who is the harbour master?",
        "When does the ferry leave?",
        "Summarise the account summary.",  # "sum" only inside words
        "What is almost always kept?",
        "谁是港务长？",
    ],
)
def test_other_questions_are_not(question: str) -> None:
    assert not is_table_question(question)


def test_the_prompt_shows_the_table_its_columns_and_three_rows_but_no_worked_query(
    league: list[Table],
) -> None:
    prompt = query_prompt("Which team had the most points?", league)
    assert "Table league (the sheet 'League' of league.xlsx, 5 rows)" in prompt
    assert "team TEXT, played INTEGER, goals_scored INTEGER, points INTEGER, share REAL" in prompt
    assert "('Hajduk', 30, 55, 61, 12.5)" in prompt
    assert "('Rijeka', 30, 49, 58, 11)" in prompt
    assert "Osijek" not in prompt
    assert "FROM" not in prompt.upper().replace("FROM THIS", "")


def test_the_prompt_lists_the_values_of_a_text_column_that_repeats_a_few_of_them(
    tmp_path: Path,
) -> None:
    """The model filters on words the question uses ("horsebean"): it can only pick the right
    column and spelling when it sees which column holds them."""
    feeds = ["horsebean", "Casein", "soybean", "horsebean", "soybean", "Casein", "horsebean"]
    rows = [("Weight", "Feed", "Chick")] + [
        (100 + n, feed, f"chick {n}") for n, feed in enumerate(feeds)
    ]
    (chicks,) = find_tables(sheet_sources(tmp_path / "c.xlsx", rows, "chickwts"))
    prompt = query_prompt("How much did the chicks fed horsebean weigh?", [chicks])
    assert "feed TEXT (one of 'Casein', 'horsebean', 'soybean')" in prompt
    assert "chick TEXT. " in prompt  # a value per row names rows, not groups: not listed


def test_the_prompt_shows_the_tables_nearest_the_question_first(tmp_path: Path) -> None:
    staff, budget = find_tables(
        sheet_sources(tmp_path / "a.xlsx", [("Name", "Role"), ("Ana", "Pilot")], "Staff")
        + sheet_sources(tmp_path / "b.xlsx", [("Item", "Cost"), ("Buoys", 3500)], "Budget")
    )
    prompt = query_prompt("What is the total cost of the buoys?", [staff, budget])
    assert prompt.index("Table budget") < prompt.index("Table staff")


@pytest.mark.parametrize(
    ("written", "result", "labels"),
    [
        ("SELECT count(*) FROM league;", "5", ["Hajduk", "Dinamo | Zagreb", "Rijeka", "Osijek"]),
        (
            "```sql\nSELECT COUNT(team) FROM league WHERE points > 50\n```\nThis counts them.",
            "3",
            ["Hajduk", "Dinamo | Zagreb", "Rijeka"],
        ),
        ('SELECT SUM("Goals scored") FROM "League"', "1238", None),
        ("SELECT team FROM league ORDER BY points DESC LIMIT 1", "Dinamo | Zagreb", None),
        (
            "select team from league where goals_scored = (select min(goals_scored) from league)",
            "Istra",
            ["Istra"],
        ),
        (
            "SELECT (SELECT points FROM league WHERE team = 'Hajduk') - "
            "(SELECT points FROM league WHERE team = 'Rijeka')",
            "3",
            ["Hajduk", "Rijeka"],
        ),
        ("Here is the query: SELECT `points` FROM [league] WHERE team = 'Rijeka'", "58", None),
        ("SELECT avg(points) FROM league", "51.6", None),
        ("SELECT max(share) FROM league", "20", ["Dinamo | Zagreb"]),
    ],
)
def test_a_select_the_model_wrote_is_computed_with_the_rows_it_depends_on(
    league: list[Table], written: str, result: str, labels: list[str] | None
) -> None:
    answer = run_query(written, league)
    assert answer is not None
    assert answer.result == result
    if labels is not None:
        assert [ref.label for ref in answer.used][: len(labels)] == labels
    assert answer.sources == (1,)


def test_the_hint_gives_the_result_first_then_the_query_and_the_rows() -> None:
    text = "| Team | Points |\n|---|---|\n| Hajduk | 61 |\n| Rijeka | 58 |\n| Istra | 25 |"
    source = Source(1, 9, 1, "t.xlsx", "/t.xlsx", 1, "Results A1:B4", "Results", text, 1.0)
    tables = find_tables([source])
    answer = run_query("SELECT count(*) FROM results WHERE points > 50", tables)
    assert answer is not None
    assert answer.line == (
        "The answer, computed over the sheet 'Results' of t.xlsx (3 rows): 2. "
        "Query: SELECT count(*) FROM results WHERE points > 50; "
        "from the rows Hajduk [1], Rijeka [1] (sources [1])"
    )
    # Rows named by a number ("21" in a sheet of measurements) are no names: cited alone.
    numbers = find_tables(
        [replace(source, text=text.replace("Hajduk", "7").replace("Rijeka", "8"))]
    )
    counted = run_query("SELECT count(*) FROM results WHERE points > 50", numbers)
    assert counted is not None
    assert counted.line.endswith("points > 50 (sources [1])")


@pytest.mark.parametrize(
    ("written", "run", "result"),
    [
        # The value is the island's, not the species': the model knew it, not its column.
        (
            "SELECT avg(mass) FROM penguins WHERE species = 'Dream'",
            "SELECT avg(mass) FROM penguins WHERE island = 'Dream'",
            "3400",
        ),
        ("SELECT count(*) FROM penguins WHERE species = 'adelie'", None, "2"),  # as people read
        ("SELECT max(mass) FROM penguins WHERE species = 'Emperor'", None, None),  # no such row
        ("SELECT avg(island) FROM penguins", None, None),  # SQLite would say 0
    ],
)
def test_a_query_is_mended_where_it_named_the_wrong_column_and_refused_where_it_sums_text(
    written: str, run: str | None, result: str | None
) -> None:
    text = (
        "| Species | Island | Mass |\n|---|---|---|\n| Adelie | Dream | 3400 |\n"
        "| Gentoo | Biscoe | 5000 |\n| Adelie | Torgersen | 3600 |"
    )
    source = Source(1, 9, 1, "p.xlsx", "/p.xlsx", 1, "Penguins A1:C4", "Penguins", text, 1.0)
    answer = run_query(written, find_tables([source]))
    assert (answer and answer.result) == result
    if answer is not None:
        assert answer.sql == (run or written)


def test_a_tie_cites_the_rows_holding_the_result(tmp_path: Path) -> None:
    rows = [("Team", "Points"), ("Hajduk", 61), ("Rijeka", 61), ("Istra", 25)]
    tables = find_tables(sheet_sources(tmp_path / "tie.xlsx", rows, "Tie"))
    answer = run_query("SELECT max(points) FROM tie", tables)
    assert answer is not None
    assert [ref.label for ref in answer.used] == ["Hajduk", "Rijeka"]


@pytest.mark.parametrize(
    "written",
    [
        "INSERT INTO league VALUES ('Gorica', 30, 29, 30, NULL)",
        "INSERT INTO league SELECT * FROM league",
        "DELETE FROM league",
        "ATTACH DATABASE '/tmp/x.db' AS x",
        "SELECT count(*) FROM league; DROP TABLE league",
        "SELECT 1;\nSELECT 2",
        "PRAGMA table_info(league)",
        "SELECT * FROM pragma_table_info('league')",
        "SELECT name FROM sqlite_master",
        "SELECT wins FROM league",  # no such column
        "SELECT count(*) FROM teams",  # no such table
        "SELECT load_extension('evil')",
        "SELECT length(randomblob(100000000))",
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n",
        "SELECT count(*) FROM league a, league b, league c, league d, league e, league f, "
        "league g, league h, league i, league j",  # stopped by the step limit
        "SELECT team FROM league WHERE points > 100",  # no row: nothing computed
        "The answer is 5 teams.",
        "",
    ],
)
def test_anything_but_one_select_over_the_tables_is_refused(
    league: list[Table], written: str
) -> None:
    assert run_query(written, league) is None


def test_a_refused_write_leaves_the_tables_as_they_were(league: list[Table]) -> None:
    assert run_query("SELECT 1; DELETE FROM league", league) is None
    answer = run_query("SELECT count(*) FROM league", league)
    assert answer is not None
    assert answer.result == "5"
