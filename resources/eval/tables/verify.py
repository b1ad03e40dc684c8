"""Check the tables evaluation set against the workbooks as Docent reads them.

    .venv/bin/python resources/eval/tables/verify.py [--mirror URL]

The workbooks are the ones `docent eval resources/eval/tables/qa.jsonl` uses: fetched, with
their hashes checked, into Docent's cache (app.bench.eval_set) unless they are there already.
Each is read with Docent's own parser and chunker (`app.documents.open_document`,
`chunk_pages`), so a page here is the page Docent indexes and cites: one per 100 rows of a
sheet, labelled with the sheet's name and cell range. Checked:

- every workbook's page and chunk counts are the ones sources.toml records, and so are its
  sheets: the pages each is on; its header row, which Docent's pipe tables must be headed with;
  and its data rows (the filled rows under the header), counted both in the workbook (openpyxl)
  and in the pipe tables Docent indexes, so every row of the sheet is on its pages;
- every line of qa.jsonl is a QA line `docent eval` reads (app.bench.evaluation), of kind table,
  with `lang` (en, zh), `split` (tune, holdout), `task` (count, sum, average, max, min, argmax,
  difference, lookup), `computed` true, a `how` in words, the `sheet` it is about (its `pages`
  are pages of that sheet) and `evidence`: a quote of at most 200 characters that is on every
  page of `pages` (whitespace aside), or one quote per page in the order of `pages`;
- each answer is recomputed: the line's `sql`, one SELECT over the workbook's sheets loaded into
  an in-memory SQLite database (a table per sheet, named as the sheet; its columns named by the
  sheet's header row that sources.toml gives, a blank one "column N"; its rows the filled rows
  under the header, empty cells NULL), must give one row of one value, and every answer
  alternative must be that value: the same text (case aside), or the number rounded to the
  alternative's decimals ("26.7" and "26.66" for 26.6636; "1,602" for 1602).

Prints a summary (questions by task, language, split, document and sheet; which questions
Docent's table step takes for a table question) and exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import sys
import tomllib
import warnings
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the repository: app.documents lives there
sys.path.insert(0, str(ROOT))

from app.answering.tables import is_table_question  # noqa: E402
from app.bench.eval_set import (  # noqa: E402
    SOURCES,
    EvalSetError,
    fetch_documents,
    load_sources,
    set_folder,
)
from app.bench.evaluation import EvalError  # noqa: E402
from app.bench.evaluation import load_questions as eval_questions  # noqa: E402
from app.documents import PageText, chunk_pages, open_document  # noqa: E402
from app.documents.office import is_table  # noqa: E402
from app.paths import Paths  # noqa: E402

QA_FILE = HERE / "qa.jsonl"
TASKS = {"count", "sum", "average", "max", "min", "argmax", "difference", "lookup"}
LANGS = {"en", "zh"}
SPLITS = {"tune", "holdout"}
MAX_EVIDENCE = 200
MAX_UNPACKED = 100 << 20  # Docent's default limit for an Office file's unpacked size
_SPACE = re.compile(r"\s+")
_SHEET_LABEL = re.compile(r"^(?P<sheet>.+) [A-Z]{1,3}\d+:[A-Z]{1,3}\d+$")  # "iris A1:E100"
_NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<decimals>\d+))?")

Value = int | float | str | None


def squeeze(text: str) -> str:
    """Text without any whitespace, case folded: a quote is compared with its page on the
    characters alone (a pipe table's cells are padded with one space each side)."""
    return _SPACE.sub("", text).casefold()


def load_questions(path: Path = QA_FILE) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_pages(path: Path) -> list[PageText]:
    with open_document(path, max_unpacked=MAX_UNPACKED) as document:
        return list(document.pages())


def page_text(page: PageText) -> str:
    """A page's text as Docent indexes it: its blocks, joined."""
    return "\n".join(text for text, _heading in page.blocks)


def sheet_of(page: PageText) -> str | None:
    match = _SHEET_LABEL.match(page.label)
    return match["sheet"] if match else None


def table_rows(pages: list[PageText]) -> int:
    """The rows of the Markdown pipe tables on `pages`, each table's header and rule aside."""
    return sum(
        len(text.split("\n")) - 2 for page in pages for text, _ in page.blocks if is_table(text)
    )


def table_header(pages: list[PageText]) -> list[str] | None:
    """The header cells of the first pipe table on `pages`, trailing empty ones aside."""
    for page in pages:
        for text, _ in page.blocks:
            if is_table(text):
                cells = [cell.strip() for cell in text.split("\n", 1)[0].strip()[1:-1].split(" | ")]
                while cells and not cells[-1]:
                    cells.pop()
                return cells
    return None


def as_cells(row: list[Value]) -> list[str]:
    """A workbook row as Docent's reader writes its cells, trailing empty ones aside."""
    cells = [" ".join(str(value).split()) if value is not None else "" for value in row]
    while cells and not cells[-1]:
        cells.pop()
    return cells


# --- the workbook as SQL ----------------------------------------------------------------------


def _sql_value(value: object) -> Value:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | str):
        return value
    return str(value)  # a date or time: as Docent's reader writes it


def load_workbook(
    path: Path, headers: dict[str, int]
) -> tuple[sqlite3.Connection, dict[str, list[Value]], dict[str, int]]:
    """Each sheet of the workbook as a table named after it: its columns named by its header row
    (`headers`: the sheet's row number; the first row of a sheet not named), its rows the filled
    rows under it. With each sheet's header cells and number of data rows."""
    import openpyxl

    connection = sqlite3.connect(":memory:")
    header_cells: dict[str, list[Value]] = {}
    counts: dict[str, int] = {}
    with path.open("rb") as handle, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl: "Slicer List extension is not supported"
        workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        for sheet in workbook.worksheets:
            sheet.reset_dimensions()  # as Docent's reader: some writers leave it at "A1"
            start = headers.get(sheet.title, 1)
            rows = [
                [_sql_value(value) for value in row]
                for number, row in enumerate(sheet.iter_rows(values_only=True), start=1)
                if number >= start
            ]
            rows = [row for row in rows if any(v is not None for v in row)]
            if not rows:
                continue
            width = max(max(i + 1 for i, v in enumerate(row) if v is not None) for row in rows)
            rows = [(row + [None] * width)[:width] for row in rows]
            names: list[str] = []
            for position, cell in enumerate(rows[0], start=1):
                name = str(cell) if cell is not None else f"column {position}"
                while name.lower() in (n.lower() for n in names):
                    name += "_"
                names.append(name)
            columns = ", ".join(_quoted(name) for name in names)
            connection.execute(f"CREATE TABLE {_quoted(sheet.title)} ({columns})")
            marks = ", ".join("?" * width)
            connection.executemany(f"INSERT INTO {_quoted(sheet.title)} VALUES ({marks})", rows[1:])
            header_cells[sheet.title] = rows[0]
            counts[sheet.title] = len(rows) - 1
        workbook.close()
    return connection, header_cells, counts


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def agrees(alternative: str, value: Value) -> bool:
    """The alternative is the value: as text (case aside), or a number that is the value
    rounded to the alternative's decimals ("26.7" for 26.6636, "1,602" for 1602)."""
    if isinstance(value, str):
        return alternative.strip().casefold() == value.strip().casefold()
    if value is None or (match := _NUMBER.fullmatch(alternative.strip())) is None:
        return False
    decimals = len(match["decimals"] or "")
    written = Decimal(alternative.strip().replace(",", ""))
    tolerance = Decimal(5) / Decimal(10) ** (decimals + 1) + Decimal("1e-9")
    return abs(Decimal(repr(float(value))) - written) <= tolerance


# --- checks -----------------------------------------------------------------------------------


def check_document(
    name: str,
    entry: dict[str, Any],
    pages: list[PageText],
    headers: dict[str, list[Value]],
    rows: dict[str, int],
) -> list[str]:
    problems = []
    if len(pages) != entry.get("pages"):
        problems.append(f"{name}: {len(pages)} pages, {SOURCES} says {entry.get('pages')}")
    chunks = len(list(chunk_pages(pages)))
    if chunks != entry.get("chunks"):
        problems.append(f"{name}: {chunks} chunks, {SOURCES} says {entry.get('chunks')}")
    for sheet in entry.get("sheets", []):
        title = sheet["name"]
        on = [page for page in pages if sheet_of(page) == title]
        if [page.number for page in on] != sheet["pages"]:
            numbers = [page.number for page in on]
            problems.append(
                f"{name}: sheet {title} is on pages {numbers}, {SOURCES} says {sheet['pages']}"
            )
        if rows.get(title) != sheet["rows"]:
            problems.append(
                f"{name}: sheet {title} has {rows.get(title)} rows under its header (row "
                f"{sheet['header']}), {SOURCES} says {sheet['rows']}"
            )
        if (indexed := table_rows(on)) != sheet["rows"]:
            problems.append(
                f"{name}: Docent indexes {indexed} rows of sheet {title}, {SOURCES} says "
                f"{sheet['rows']}"
            )
        if (found := table_header(on)) != (wanted := as_cells(headers.get(title, []))):
            problems.append(
                f"{name}: Docent heads sheet {title}'s table with {found}, not with its row "
                f"{sheet['header']} {wanted}"
            )
    listed = {sheet["name"] for sheet in entry.get("sheets", [])}
    if unlisted := [title for title in rows if title not in listed]:
        problems.append(f"{name}: sheets {unlisted} are not in {SOURCES}")
    return problems


def check_question(
    number: int,
    qa: dict[str, Any],
    pages: list[PageText],
    database: sqlite3.Connection,
) -> list[str]:
    where = f"qa.jsonl line {number}"
    problems = []
    for field, kind in (
        ("question", str),
        ("answers", list),
        ("document", str),
        ("pages", list),
        ("kind", str),
        ("lang", str),
        ("split", str),
        ("task", str),
        ("how", str),
        ("sheet", str),
        ("sql", str),
    ):
        if not isinstance(qa.get(field), kind):
            problems.append(f"{where}: {field} missing or not a {kind.__name__}")
    if problems:
        return problems
    if qa["kind"] != "table" or qa.get("computed") is not True:
        problems.append(f"{where}: a table question has kind table and computed true")
    if qa["lang"] not in LANGS or qa["split"] not in SPLITS or qa["task"] not in TASKS:
        problems.append(f"{where}: lang, split or task has an unknown value")
    sheet_pages = [page.number for page in pages if sheet_of(page) == qa["sheet"]]
    if not sheet_pages:
        return [*problems, f"{where}: no sheet {qa['sheet']!r} in {qa['document']}"]
    listed = qa["pages"]
    if not listed or not all(isinstance(p, int) and p in sheet_pages for p in listed):
        return [*problems, f"{where}: pages {listed} not among sheet {qa['sheet']}'s {sheet_pages}"]
    evidence = qa.get("evidence")
    quotes = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(quotes, list) or not all(isinstance(q, str) and q for q in quotes):
        return [*problems, f"{where}: evidence must be a quote or a list of quotes"]
    if len(quotes) == 1:
        quotes = quotes * len(listed)  # one quote that every listed page holds
    if len(quotes) != len(listed):
        problems.append(f"{where}: {len(quotes)} evidence quotes for {len(listed)} pages")
    texts = [squeeze(page_text(page)) for page in pages]
    for quote, page in zip(quotes, listed, strict=False):
        if len(quote) > MAX_EVIDENCE:
            problems.append(f"{where}: evidence longer than {MAX_EVIDENCE} characters")
        if squeeze(quote) not in texts[page - 1]:
            found = [n for n, text in enumerate(texts, start=1) if squeeze(quote) in text]
            problems.append(f"{where}: evidence {quote!r} not on page {page} (found on {found})")
    if not qa["answers"] or not all(isinstance(a, str) and a.strip() for a in qa["answers"]):
        return [*problems, f"{where}: answers must be non-empty strings"]
    if not qa["sql"].lstrip().lower().startswith("select"):
        return [*problems, f"{where}: sql is not a SELECT"]
    try:
        result = database.execute(qa["sql"]).fetchall()
    except sqlite3.Error as error:
        return [*problems, f"{where}: sql fails: {error}"]
    if len(result) != 1 or len(result[0]) != 1 or result[0][0] is None:
        return [*problems, f"{where}: sql gives {result[:3]}, not one value (a tie?)"]
    value = result[0][0]
    if wrong := [a for a in qa["answers"] if not agrees(a, value)]:
        problems.append(f"{where}: answers {wrong} are not the sql's result {value!r}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--mirror", metavar="URL", help="as `docent eval --mirror`")
    arguments = parser.parse_args(argv[1:])
    folder = set_folder(Paths.from_environment().cache_dir, HERE / SOURCES)
    try:
        sources = load_sources(HERE / SOURCES)
        paths = asyncio.run(fetch_documents(sources, folder, mirror=arguments.mirror, report=print))
        eval_questions(QA_FILE)  # `docent eval` reads every line
    except (EvalSetError, EvalError) as error:
        print(f"FAIL {error}")
        return 1
    entries = {
        entry["name"]: entry
        for entry in tomllib.loads((HERE / SOURCES).read_text(encoding="utf-8"))["document"]
    }
    problems: list[str] = []
    read: dict[str, tuple[list[PageText], sqlite3.Connection]] = {}
    for source, path in zip(sources, paths, strict=True):
        entry = entries[source.name]
        pages = read_pages(path)
        header_rows = {sheet["name"]: sheet["header"] for sheet in entry.get("sheets", [])}
        database, headers, rows = load_workbook(path, header_rows)
        read[source.name] = (pages, database)
        problems += check_document(source.name, entry, pages, headers, rows)
    questions = load_questions()
    for number, qa in enumerate(questions, start=1):
        if (document := read.get(qa.get("document", ""))) is None:
            problems.append(f"qa.jsonl line {number}: unknown document {qa.get('document')!r}")
            continue
        problems += check_question(number, qa, *document)
    seen = Counter(qa.get("question") for qa in questions)
    problems += [f"asked twice: {q!r}" for q, count in seen.items() if count > 1]

    print(f"{len(questions)} questions over {len(read)} documents")
    for field in ("task", "lang", "split", "document"):
        counts = Counter(str(qa.get(field)) for qa in questions)
        print(f"  by {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sheets = Counter(f"{qa.get('document')}/{qa.get('sheet')}" for qa in questions)
    print("  by sheet: " + ", ".join(f"{k} {v}" for k, v in sorted(sheets.items())))
    missed = [n for n, qa in enumerate(questions, 1) if not is_table_question(qa["question"])]
    print(
        f"  taken for a table question by the table step: {len(questions) - len(missed)}"
        + (f" (not lines {', '.join(map(str, missed))})" if missed else "")
    )
    for problem in problems:
        print(f"FAIL {problem}")
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
