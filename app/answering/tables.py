"""The table step: a question that counts, sums or compares over a table (a sheet's rows, a Word
or PowerPoint table) is computed, not read. The model writes one SQLite SELECT over the tables the
sources hold, SQLite runs it on an in-memory copy of them, and the answer is written with the
result, and the rows it came from, in front of the model.

Tables are found in the sources' text as the Office reader wrote them (app.documents.office):
Markdown pipe tables, the header repeated in every chunk, so the chunks of one sheet are joined
back into one table. A table is computed over whole: the chunks retrieval did not choose are
read from the library (`rest_of_tables`), as a count over the rows a search happened to find
is a wrong count. Only rows the prompt shows are cited by number.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from app.answering.events import Source
from app.index import StoredChunk

MAX_QUERY_TOKENS = 96
# Tables described in the prompt, most relevant to the question first: each costs the 0.5B
# model's short attention, and a question is about one table.
MAX_PROMPT_TABLES = 3
EXAMPLE_ROWS = 3
# A result longer than this is not an answer a table step helps with ("list every row").
MAX_RESULT_ROWS = 20
# SQLite's virtual-machine steps a query may take (a cross join of three 500-row tables would
# take minutes); checked every PROGRESS_STEP of them.
MAX_QUERY_STEPS = 2_000_000
PROGRESS_STEP = 1_000
# The rows a result depends on are found by running the query again without each row; past this
# many rows that costs too much, and the rows are those holding a value of the result.
MAX_ROWS_TRIED = 400
# Room for any value a table holds, none for randomblob(1e9) or printf's padding.
MAX_VALUE_BYTES = 1 << 20
ROW_LABELS_SHOWN = 5
# A text column holding at most this many values, each on several rows, groups the rows (feed,
# island, species): the prompt lists them so that the model filters on the column holding them.
MAX_GROUPS_LISTED = 8
_TOTALS = frozenset(
    ["total", "totals", "grand total", "sum", "all", "合计", "总计", "总和", "共计", "小计"]
)

Value = int | float | str | None

# "how many", "the total", "which … most", "差多少": a question answered by computing over rows.
_TABLE_QUESTION = re.compile(
    r"\b(?:how\s+(?:many|much)|number\s+of|total\w*|sum|summed|average\w*|mean|median"
    r"|count\w*|most|least|fewest|highest|lowest|largest|smallest|biggest|greatest|maximum"
    r"|minimum|max|min|more|less|fewer|differen\w*|compare\w*|rank\w*|combined|altogether"
    r"|best|worst|(?:heavi|light|strong|weak|long|short|tall|fast|slow|old|young|new|earli"
    r"|cheap|costli|rich|poor|hott|cold|warm|wid|narrow|deep|near|clos)est)\b"
    r"|多少|几个|几位|几名|总共|一共|共有|合计|总计|总和|总数|最多|最少|最高|最低|最大|最小|平均|差",
    re.IGNORECASE,
)
_ROW = re.compile(r"\|.*\|")
_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")
_CELL_SEPARATOR = re.compile(r"(?<!\\)\|")
_NUMBER = re.compile(
    r"(?P<sign>[-+−]?)\s*[$€£¥]?\s*"
    r"(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<fraction>\.\d+)?(?P<exponent>[eE][-+]?\d+)?"
    r"\s*(?P<percent>%?)"
)
_MIDNIGHT = " 00:00:00"  # how the reader writes a date-only cell (str of a datetime)
_SHEET_LABEL = re.compile(r" [A-Z]{1,3}\d+:[A-Z]{1,3}\d+$")  # "Results A1:F65"
_WORD = re.compile(r"\w{3,}")
_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_STATEMENT_KEYWORDS = (
    "select|with|insert|update|delete|replace|create|drop|alter|attach|detach|pragma|vacuum"
    "|begin|commit|end|rollback|savepoint|release|reindex|analyze|explain"
)
_STATEMENT_LINE = re.compile(rf"^\s*({_STATEMENT_KEYWORDS})\b", re.IGNORECASE | re.MULTILINE)
_FIRST_SELECT = re.compile(r"\bSELECT\b")  # in prose ("Here is the query: SELECT …")
_FILTER = re.compile(r"\b(?P<column>\w+)\s*(?:=|==|\bLIKE\b)\s*'(?P<value>[^']*)'", re.IGNORECASE)
_AGGREGATE = re.compile(r"\b(?:sum|avg|total)\s*\(\s*(?:distinct\s+)?(\w+)\s*\)", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n\s*\n")
# A name in double quotes, backticks or brackets: the model often writes a header as the
# document does ("Cost in euros"), not as the prompt named its column.
_QUOTED_NAME = re.compile(r'"([^"]+)"|`([^`]+)`|\[([^\]]+)\]')
_SAFE_FUNCTIONS = frozenset(
    "count sum total avg min max abs round lower upper length trim ltrim rtrim substr substring"
    " instr replace coalesce ifnull nullif iif like glob group_concat date time datetime"
    " julianday strftime printf format typeof cast".split()
)


@dataclass(frozen=True, slots=True)
class RowRef:
    """Where a row of a table came from, for a citation."""

    source: int  # the Source's number; 0: a chunk the prompt does not show
    row: int  # 1-based among its chunk's rows of the table
    label: str  # its first filled cell, as written: what a reader looks for
    where: str  # its chunk's page label ("Results A101:F165"): where a reader finds it


@dataclass(frozen=True, slots=True)
class Column:
    name: str  # as SQL names it
    header: str  # as the document wrote it
    type: str  # "INTEGER", "REAL" or "TEXT"


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    title: str  # the sheet's name, or the heading of the section holding the table
    document: str
    is_sheet: bool
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    origins: tuple[RowRef, ...]  # one per row

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(sorted({origin.source for origin in self.origins} - {0}))

    @property
    def described(self) -> str:
        if self.is_sheet:  # two workbooks may each have an "iris" sheet
            return f"the sheet '{self.title}' of {self.document}"
        return f"the table in '{self.title}'" if self.title else f"a table in {self.document}"


@dataclass(frozen=True, slots=True)
class TableAnswer:
    sql: str  # as run
    tables: tuple[Table, ...]  # those the query read
    columns: tuple[str, ...]
    values: tuple[tuple[Value, ...], ...]  # the result's rows
    used: tuple[RowRef, ...]  # the rows the result depends on

    @property
    def result(self) -> str:
        return "; ".join(", ".join(_shown(value) for value in row) for row in self.values)

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(sorted({ref.source for ref in self.used} - {0}))

    @property
    def line(self) -> str:
        """What the answering prompt is told: the result first (a small model given the query
        first answered "not found" beside it), then how it was computed and from which rows."""
        rows = sum(len(table.rows) for table in self.tables)
        over = " and ".join(table.described for table in self.tables)
        cited = " ".join(f"[{number}]" for number in self.sources)
        line = f"The answer, computed over {over} ({rows} rows): {self.result}. Query: {self.sql}"
        named = [ref for ref in self.used if _number(ref.label) is None]  # "21" names no row
        if named:
            labels = [_row_label(ref) for ref in named[:ROW_LABELS_SHOWN]]
            more = len(named) - len(labels)
            line += f"; from the rows {', '.join(labels)}" + (f" and {more} more" if more else "")
        if cited:
            line += f" (sources {cited})"
        return line


def _row_label(ref: RowRef) -> str:
    return f"{ref.label} [{ref.source}]" if ref.source else f"{ref.label} ({ref.where})"


def is_table_question(question: str) -> bool:
    """Whether the question counts, totals, averages or compares: worth computing when a table
    is among the sources."""
    return _TABLE_QUESTION.search(question) is not None


def find_tables(sources: Sequence[Source]) -> list[Table]:
    """The tables in the sources, a sheet's or a long table's chunks joined back into one (their
    rows in the document's order), in the order of the best-ranked source holding each."""
    gathered: dict[tuple[int, str | None, tuple[str, ...]], list[tuple[Source, list[str]]]] = {}
    for source in sorted(sources, key=lambda s: s.chunk_id):
        for header, rows in _pipe_tables(source.text):
            part = gathered.setdefault((source.document_id, source.heading, tuple(header)), [])
            part.extend((source, row) for row in rows)
    ranked = sorted(gathered.items(), key=lambda item: min(_rank(s) for s, _ in item[1]))
    # Two workbooks' "iris" sheets are named after their workbooks, not "iris" and "iris_2".
    documents_by_title: dict[str | None, set[int]] = {}
    for document_id, heading, _ in gathered:
        documents_by_title.setdefault(heading, set()).add(document_id)
    taken: set[str] = set()
    return [
        _table(header, rows, taken, qualified=len(documents_by_title[heading]) > 1)
        for (_, heading, header), rows in ranked
    ]


def whole_tables(sources: Sequence[Source], chunks: Sequence[StoredChunk]) -> list[Table]:
    """The sources' tables, each with the rows `chunks` (their documents') hold beyond them."""
    return find_tables([*sources, *rest_of_tables(sources, chunks)])


def rest_of_tables(sources: Sequence[Source], chunks: Sequence[StoredChunk]) -> list[Source]:
    """The chunks among `chunks` holding more rows of a table the sources hold (the same
    document, heading and header), as sources numbered 0: the prompt does not show them."""
    held = {
        (source.document_id, source.heading, tuple(header))
        for source in sources
        for header, _ in _pipe_tables(source.text)
    }
    chosen = {source.chunk_id for source in sources}
    return [
        Source.from_chunk(0, chunk, 0.0)
        for chunk in chunks
        if chunk.id not in chosen
        and any(
            (chunk.document_id, chunk.heading, tuple(header)) in held
            for header, _ in _pipe_tables(chunk.text)
        )
    ]


def _rank(source: Source) -> float:
    return source.number or math.inf


def query_prompt(question: str, tables: Sequence[Table]) -> str:
    """The instruction that replaces the answer instruction: write one SELECT over the tables
    (those most related to the question), shown by name, columns and a few rows."""
    shown = sorted(tables, key=lambda table: -_overlap(question, table))[:MAX_PROMPT_TABLES]
    described = "\n".join(_described(table) for table in shown)
    return (
        "Do not answer yet. Write only one SQLite SELECT statement that computes the answer "
        "from this table, using its column names as written here:\n" + described
    )


def run_query(written: str, tables: Sequence[Table]) -> TableAnswer | None:
    """The SELECT the model wrote, run over the tables; None when it is not a single SELECT
    that reads only them, fails, runs too long, or returns no row or more than
    MAX_RESULT_ROWS."""
    statement = _statement(written)
    if statement is None or not tables:
        return None
    sql = _with_filter_columns(_with_column_names(statement, tables), tables)
    if _sums_text(sql, tables):
        return None
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        _load(connection, tables)
        read: set[str] = set()
        connection.set_authorizer(_authorizer({t.name.lower() for t in tables}, read))
        try:
            columns, values = _fetch(connection, sql)
        except (sqlite3.Error, sqlite3.Warning):  # Warning: two statements (Python 3.11)
            return None
        if not values or len(values) > MAX_RESULT_ROWS or all(v is None for v in values[0]):
            return None
        # Only the statement above was authorised: the runs without a row are our own.
        connection.set_authorizer(None)
        used_tables = tuple(t for t in tables if t.name.lower() in read)
        used = _rows_used(connection, sql, values, used_tables)
        return TableAnswer(sql, used_tables, columns, values, used)
    finally:
        connection.close()


# --- finding tables ---------------------------------------------------------------------------


def _pipe_tables(text: str) -> Iterator[tuple[list[str], list[list[str]]]]:
    """Each Markdown pipe table in a chunk: its header cells and its rows' cells."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if _is_header(lines, index):
            header = _cells(lines[index])
            rows: list[list[str]] = []
            index += 2
            # A chunk may hold two blocks of one table, each with its header and rule.
            while _is_row(lines, index) and not _is_header(lines, index):
                cells = _cells(lines[index])
                rows.append((cells + [""] * len(header))[: len(header)])
                index += 1
            if rows:
                yield header, rows
        else:
            index += 1


def _is_row(lines: Sequence[str], index: int) -> bool:
    return index < len(lines) and _ROW.fullmatch(lines[index].strip()) is not None


def _is_header(lines: Sequence[str], index: int) -> bool:
    """A row followed by a rule line."""
    return (
        _is_row(lines, index)
        and _is_row(lines, index + 1)
        and bool(_RULE.fullmatch(lines[index + 1].strip()))
    )


def _cells(line: str) -> list[str]:
    inner = line.strip()[1:-1]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SEPARATOR.split(inner)]


def _table(
    header: Sequence[str], rows: list[tuple[Source, list[str]]], taken: set[str], qualified: bool
) -> Table:
    first = rows[0][0]
    # A totals row (a pivot table's "Grand Total") is no row: a count or a sum would take it in.
    rows = [row for row in rows if _label(row[1]).casefold() not in _TOTALS] or rows
    is_sheet = bool(_SHEET_LABEL.search(first.page_label)) and first.document.lower().endswith(
        ".xlsx"
    )
    title = first.heading or ""
    named = f"{PurePath(first.document).stem} {title}" if qualified else title
    name = _identifier(named or "table", taken, prefix="table")
    names: set[str] = set()
    columns: list[Column] = []
    typed_columns: list[list[Value]] = []
    for position, heading in enumerate(header):
        texts = [cells[position] for _, cells in rows]
        kind, typed = _typed_column(texts)
        column_name = _identifier(heading or f"column {position + 1}", names, prefix="column")
        columns.append(Column(column_name, heading, kind))
        typed_columns.append(typed)
    counts: dict[int, int] = {}
    origins: list[RowRef] = []
    for source, cells in rows:
        counts[source.chunk_id] = counts.get(source.chunk_id, 0) + 1
        label = _label(cells)
        origins.append(RowRef(source.number, counts[source.chunk_id], label, source.page_label))
    return Table(
        name=name,
        title=title,
        document=first.document,
        is_sheet=is_sheet,
        columns=tuple(columns),
        rows=tuple(zip(*typed_columns, strict=True)),
        origins=tuple(origins),
    )


def _label(cells: Sequence[str]) -> str:
    """A row's first filled cell, as written: what names it."""
    return next((cell for cell in cells if cell), "")


def _typed_column(texts: Sequence[str]) -> tuple[str, list[Value]]:
    """A column is numeric when every filled cell of it is a number; an empty cell is NULL."""
    numbers = [_number(text) for text in texts]
    filled = [number for text, number in zip(texts, numbers, strict=True) if text]
    if filled and all(number is not None for number in filled):
        kind = "INTEGER" if all(isinstance(number, int) for number in filled) else "REAL"
        return kind, list(numbers)
    return "TEXT", [text.removesuffix(_MIDNIGHT) if text else None for text in texts]


def _number(text: str) -> int | float | None:
    """ "1,234" → 1234, "12.5%" → 12.5 (as written), "€40,000" → 40000, "1e-05" → 1e-05."""
    match = _NUMBER.fullmatch(text.strip())
    if match is None:
        return None
    digits = match["digits"].replace(",", "")
    negative = match["sign"] in ("-", "−")
    if match["fraction"] or match["exponent"]:
        value = float(digits + (match["fraction"] or "") + (match["exponent"] or ""))
        return -value if negative else value
    return -int(digits) if negative else int(digits)


def _identifier(text: str, taken: set[str], prefix: str) -> str:
    """A name SQL takes unquoted, unique among `taken` (which it joins): "Cost in euros" →
    cost_in_euros, "2024" → column_2024, "Order" → order_."""
    name = re.sub(r"\W+", "_", text.strip().lower()).strip("_") or prefix
    if name[0].isdigit():
        name = f"{prefix}_{name}"
    if name.startswith("sqlite_") or _is_keyword(name):
        name += "_"
    unique, suffix = name, 2
    while unique in taken:
        unique, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(unique)
    return unique


@functools.cache
def _is_keyword(name: str) -> bool:
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute(f"SELECT 0 AS {name}")
    except sqlite3.Error:
        return True
    finally:
        probe.close()
    return False


def _overlap(question: str, table: Table) -> int:
    words = {word.lower() for word in _WORD.findall(question)}
    text = " ".join([table.title, *(c.header for c in table.columns), *map(str, table.rows)])
    return sum(word in text.lower() for word in words)


def _described(table: Table) -> str:
    columns = ", ".join(
        _column_described(column, [row[index] for row in table.rows])
        for index, column in enumerate(table.columns)
    )
    examples = ", ".join(
        "(" + ", ".join(_literal(value) for value in row) + ")" for row in table.rows[:EXAMPLE_ROWS]
    )
    return (
        f"Table {table.name} ({table.described}, {len(table.rows)} rows). "
        f"Columns: {columns}. Example rows: {examples}."
    )


def _column_described(column: Column, values: Sequence[Value]) -> str:
    described = f"{column.name} {column.type}"
    if column.type != "TEXT":
        return described
    groups = {value for value in values if isinstance(value, str)}
    if 1 < len(groups) <= MAX_GROUPS_LISTED and len(groups) < len(values) / 2:
        listed = ", ".join(_literal(value) for value in sorted(groups, key=str.casefold))
        described += f" (one of {listed})"
    return described


def _literal(value: Value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return _shown(value)


def _shown(value: Value) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{round(value, 6):g}"
    return "NULL" if value is None else str(value)


# --- running the model's query ----------------------------------------------------------------


def _statement(written: str) -> str | None:
    """The one statement the model wrote, out of a code fence and any prose around it; None
    when it does not start with SELECT or WITH, or a second statement follows it."""
    fenced = _FENCE.search(written)
    text = fenced.group(1) if fenced else written
    start = _STATEMENT_LINE.search(text) or _FIRST_SELECT.search(text)
    if start is None:
        return None
    text = text[start.start() :].strip()
    if not text[:6].lower().startswith(("select", "with")):
        return None
    statement, rest = _split_at_semicolon(text)
    if _STATEMENT_LINE.search(rest):
        return None
    return _BLANK_LINE.split(statement, maxsplit=1)[0].strip() or None


def _split_at_semicolon(text: str) -> tuple[str, str]:
    """The text up to its first semicolon outside a quoted string or name, and the rest."""
    quote: str | None = None
    for position, character in enumerate(text):
        if quote is not None:
            if character == quote:
                quote = None
        elif character in "'\"`":
            quote = character
        elif character == ";":
            return text[:position], text[position + 1 :]
    return text, ""


def _with_column_names(statement: str, tables: Sequence[Table]) -> str:
    """Quoted names the document wrote ("Cost in euros", "Results") as the prompt named them."""
    names = {table.title.lower(): table.name for table in tables if table.title}
    for table in tables:
        names.update({column.header.lower(): column.name for column in table.columns})

    def renamed(match: re.Match[str]) -> str:
        quoted = next(group for group in match.groups() if group is not None)
        return names.get(quoted.strip().lower(), match.group(0))

    return _QUOTED_NAME.sub(renamed, statement)


def _with_filter_columns(statement: str, tables: Sequence[Table]) -> str:
    """`species = 'Dream'` where no row's species is Dream but one other column of the table
    holds it (island): the model knew the value, not its column."""

    def moved(match: re.Match[str]) -> str:
        column, value = match["column"], match["value"].casefold()
        for table in tables:
            names = [c.name for c in table.columns]
            if column.lower() not in names:
                continue
            holding = [
                name
                for position, name in enumerate(names)
                if any(str(row[position]).casefold() == value for row in table.rows)
            ]
            if column.lower() not in holding and len(holding) == 1:
                return match.group(0).replace(column, holding[0], 1)
        return match.group(0)

    return _FILTER.sub(moved, statement)


def _sums_text(statement: str, tables: Sequence[Table]) -> bool:
    """Whether it sums or averages a text column: SQLite says 0, a number no row holds."""
    text = {c.name for table in tables for c in table.columns if c.type == "TEXT"}
    return any(match[1].lower() in text for match in _AGGREGATE.finditer(statement))


def _load(connection: sqlite3.Connection, tables: Iterable[Table]) -> None:
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    for table in tables:
        # Text compares as people read it: 'virginica' is the sheet's 'Virginica'.
        columns = ", ".join(
            f"{column.name} {column.type}" + (" COLLATE NOCASE" if column.type == "TEXT" else "")
            for column in table.columns
        )
        connection.execute(f"CREATE TABLE {table.name} ({columns})")
        marks = ", ".join("?" * len(table.columns))
        connection.executemany(f"INSERT INTO {table.name} VALUES ({marks})", table.rows)


def _authorizer(tables: set[str], read: set[str]) -> Callable[..., int]:
    """Let a statement only select, read the tables given (noting which it reads) and call
    plain functions: no writes, pragmas, attachments, recursive queries or other tables."""

    def decide(
        action: int, first: str | None, second: str | None, _database: str | None, _by: str | None
    ) -> int:
        if action == sqlite3.SQLITE_SELECT:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ and first is not None and first.lower() in tables:
            read.add(first.lower())
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in _SAFE_FUNCTIONS:
            return sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    return decide


def _fetch(
    connection: sqlite3.Connection, sql: str
) -> tuple[tuple[str, ...], tuple[tuple[Value, ...], ...]]:
    """The query's column names and first rows (one more than MAX_RESULT_ROWS, to tell a long
    result), stopped (an OperationalError) once it has taken MAX_QUERY_STEPS."""
    calls = 0

    def progress() -> int:
        nonlocal calls
        calls += 1
        return int(calls * PROGRESS_STEP > MAX_QUERY_STEPS)

    connection.set_progress_handler(progress, PROGRESS_STEP)
    try:
        cursor = connection.execute(sql)
        rows = tuple(cursor.fetchmany(MAX_RESULT_ROWS + 1))
        return tuple(column[0] for column in cursor.description or ()), rows
    finally:
        connection.set_progress_handler(None, 0)


def _rows_used(
    connection: sqlite3.Connection,
    sql: str,
    values: tuple[tuple[Value, ...], ...],
    tables: Sequence[Table],
) -> tuple[RowRef, ...]:
    """The rows without which the result changes (those counted, summed, the maximum's, the two
    compared); when none is (a tie) or the tables are too long to try, the rows holding a value
    of the result."""
    if sum(len(table.rows) for table in tables) <= MAX_ROWS_TRIED:
        used = [
            table.origins[index]
            for table in tables
            for index in range(len(table.rows))
            if (without := _without_row(connection, sql, table.name, index + 1)) is not None
            and without != values
        ]
        if used:
            return tuple(used)
    shown = {_shown(value) for row in values for value in row if value is not None}
    return tuple(
        table.origins[index]
        for table in tables
        for index, row in enumerate(table.rows)
        if shown & {_shown(value) for value in row}
    )


def _without_row(
    connection: sqlite3.Connection, sql: str, table: str, rowid: int
) -> tuple[tuple[Value, ...], ...] | None:
    connection.execute("SAVEPOINT without_row")
    try:
        connection.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        return _fetch(connection, sql)[1]
    except (sqlite3.Error, sqlite3.Warning):
        return None
    finally:
        connection.execute("ROLLBACK TO without_row")
        connection.execute("RELEASE without_row")
