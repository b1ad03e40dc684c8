"""Check the fresh (held-out) evaluation set against the documents as Docent reads them.

    .venv/bin/python resources/eval/fresh/verify.py [--mirror URL] [--quiet]

The documents are the ones `docent eval resources/eval/fresh/qa.jsonl` uses: fetched, with their
hashes checked, into Docent's cache (app.bench.eval_set) unless they are there already. Each
document is read with Docent's own parser (`app.documents.parse.open_document`), so a page here
is the page Docent indexes and cites: its 1-based physical number (a slide, a block of a sheet's
rows, a section of a Word file), not a printed label. Checked:

- every document's page count is the one sources.toml records;
- every line of qa.jsonl is a QA line `docent eval` reads, with `kind` (lookup, combine, table,
  follow_up, unanswerable), `lang` (en, zh) and `split` (holdout: nobody tunes on this set);
- an answerable line has `document`, `pages` and `evidence`: a quote of at most 200 characters,
  or one quote per page in the order of `pages`, each on its page (whitespace aside, as layout
  breaks lines anywhere);
- each answer alternative's strings are on the question's pages (case aside), except:
  - `paraphrases`: alternatives that write a quoted answer another way ("65536" for "65,536",
    "九" for "9"), which stand beside at least one alternative that is quoted;
  - a computed answer (`compute`), which this script computes again, from the pages, and which
    one alternative must give (a number: the alternative's first number equals it, so "2 day"
    gives 2; text: the alternative is part of it, so "Zsa Zsa" gives "Zsa Zsa Gábor"; a list
    of cells: each cell holds one of the alternative's strings, and each string is in a cell):
      {"expr": "2023 - 2014"}: arithmetic (+ - * /, round(x, n), days("2024-05-01",
        "2024-04-29")) whose every number and date is on the question's pages;
      {"op": ..., "header": [...], ...}: a question about a table, computed from the Markdown
        tables Docent reads on the question's pages (the row holding all the `header` names
        is the header; a row of another width, or one that does not match, is not data):
        count | sum | mean | max | min | range (max - min) of `column`, argmax | argmin
        (the `by` cell of the row with the largest / smallest `column`), list (the `by` cells
        of the matching rows) and value (the `column` cell of the one matching row); `where`
        maps a column to a regular expression its cell must match in full;
- an unanswerable line has no answers, document or pages; its `absent` (document name ->
  strings) are on no page of that document, which shows the document does not hold the answer;
- a follow-up line has `conversation` and `turn`: the turns of a conversation are consecutive
  lines numbered 1, 2, (3).

Prints a summary (questions by kind, language and document) and exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import datetime
import json
import operator
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the repository: app.documents lives there
sys.path.insert(0, str(ROOT))

from app.bench.eval_set import (  # noqa: E402
    SOURCES,
    EvalSetError,
    fetch_documents,
    load_sources,
    set_folder,
)
from app.documents.parse import open_document  # noqa: E402
from app.paths import Paths  # noqa: E402

KINDS = {"lookup", "combine", "table", "follow_up", "unanswerable"}
LANGS = {"en", "zh"}
SPLITS = {"holdout"}
MAX_EVIDENCE = 200
MAX_UNPACKED = 100 << 20  # Docent's default limit for an EPUB's unpacked size
_SPACE = re.compile(r"\s+")


def squeeze(text: str) -> str:
    """Text without any whitespace, case folded: layout breaks lines anywhere (inside a CJK
    sentence too), so a quote is compared with its page on the characters alone."""
    return _SPACE.sub("", text).casefold()


def load_questions(path: Path = HERE / "qa.jsonl") -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_pages(path: Path) -> list[str]:
    """The text of each page as Docent indexes it: its blocks, joined."""
    with open_document(path, max_unpacked=MAX_UNPACKED) as document:
        return ["\n".join(text for text, _heading in page.blocks) for page in document.pages()]


def pages_with(quote: str, pages: list[str]) -> list[int]:
    wanted = squeeze(quote)
    return [number for number, text in enumerate(pages, start=1) if wanted in squeeze(text)]


# --- computed answers -------------------------------------------------------------------------


def table_rows(text: str) -> list[list[str]]:
    """The rows of the Markdown pipe tables in `text` (separator lines left out)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")) or re.fullmatch(r"\|(-+\|)+", line):
            continue
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line[1:-1])])
    return rows


def number(cell: str) -> float | None:
    text = cell.strip()
    if "," in text and "." not in text:
        text = text.replace(",", ".")  # a decimal comma, as in the Word table
    try:
        return float(text)
    except ValueError:
        return None


def records(texts: list[str], header: list[str]) -> list[dict[str, str]]:
    """The data rows under the row that holds every name in `header`, on each page."""
    found = []
    for text in texts:
        names: list[str] | None = None
        for row in table_rows(text):
            if all(name in row for name in header):
                names = row
                continue
            if names is not None and len(row) == len(names) and row != names:
                found.append(dict(zip(names, row, strict=True)))
    return found


def compute_table(spec: dict[str, Any], texts: list[str]) -> str | list[str]:
    rows = [
        row
        for row in records(texts, spec["header"])
        if all(re.fullmatch(p, row.get(c, "")) for c, p in spec.get("where", {}).items())
    ]
    op, column = str(spec["op"]), str(spec.get("column", ""))
    if op == "count":
        return _format(len(rows))
    if op == "list":
        return [row[spec["by"]] for row in rows]
    if op == "value":
        if len(rows) != 1:
            raise ValueError(f"{len(rows)} rows match, not one")
        return rows[0][column]
    valued = [(value, row) for row in rows if (value := number(row[column])) is not None]
    if not valued:
        raise ValueError("no row with a number in that column")
    values = [value for value, _ in valued]
    if op == "sum":
        return _format(sum(values))
    if op == "mean":
        return _format(sum(values) / len(values))
    if op == "range":
        return _format(max(values) - min(values))
    if op in ("max", "min", "argmax", "argmin"):
        pick = max if op in ("max", "argmax") else min
        best = pick(values)
        winners = [row for value, row in valued if value == best]
        if len(winners) != 1:
            raise ValueError(f"{len(winners)} rows share the {op}")
        return winners[0][column] if op in ("max", "min") else winners[0][spec["by"]]
    raise ValueError(f"unknown op {op!r}")


def _format(value: float) -> str:
    rounded = round(value, 4)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:g}"


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def compute_expr(expr: str, text: str) -> str:
    """Arithmetic over numbers and dates that `text` (the pages, squeezed) holds."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
            literal = node.value if isinstance(node.value, str) else ast.unparse(node)
            if squeeze(literal) not in text:
                raise ValueError(f"{literal} is not on the pages")
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            arguments = [value(a) for a in node.args]
            if node.func.id == "days":
                later, earlier = (datetime.date.fromisoformat(a) for a in arguments)
                return (later - earlier).days
            if node.func.id == "round":
                return round(*arguments)
        raise ValueError(f"{ast.unparse(node)} is not arithmetic this script computes")

    return _format(value(ast.parse(expr, mode="eval").body))


def matches(result: str | list[str], alternative: str | list[str]) -> bool:
    if isinstance(result, list):  # every listed cell named, and nothing else
        terms = [alternative] if isinstance(alternative, str) else alternative
        named = [any(t.casefold() in r.casefold() for t in terms) for r in result]
        used = [any(t.casefold() in r.casefold() for r in result) for t in terms]
        return bool(result) and all(named) and all(used)
    if not isinstance(alternative, str):
        return False
    if (value := number(result)) is not None:  # "2 day" for 2, "25.9242382" for 25,9242382
        first = _NUMBER.search(alternative)
        return first is not None and number(first.group()) == value
    return squeeze(alternative) in squeeze(result)  # "Zsa Zsa" for "Zsa Zsa Gábor"


_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


# --- the checks -------------------------------------------------------------------------------


def check_answerable(where: str, qa: dict[str, Any], pages: list[str]) -> list[str]:
    problems = []
    listed = qa["pages"]
    if not listed or not all(isinstance(p, int) and 1 <= p <= len(pages) for p in listed):
        return [f"{where}: pages {listed} not within 1..{len(pages)}"]
    evidence = qa.get("evidence")
    quotes = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(quotes, list) or not all(isinstance(q, str) and q for q in quotes):
        return [f"{where}: evidence must be a quote or a list of quotes"]
    if len(quotes) == 1:
        quotes = quotes * len(listed)
    if len(quotes) != len(listed):
        problems.append(f"{where}: {len(quotes)} evidence quotes for {len(listed)} pages")
    for quote, page in zip(quotes, listed, strict=False):
        if len(quote) > MAX_EVIDENCE:
            problems.append(f"{where}: evidence longer than {MAX_EVIDENCE} characters")
        if page not in (found := pages_with(quote, pages)):
            problems.append(f"{where}: evidence {quote!r} not on page {page} (found on {found})")
    texts = [pages[page - 1] for page in listed]
    text = squeeze(" ".join(texts))
    spec = qa.get("compute")
    if spec is not None:
        if qa["kind"] not in ("combine", "table", "follow_up"):
            problems.append(f"{where}: only combine, table and follow-up answers are computed")
        try:
            result = (
                compute_expr(spec["expr"], text) if "expr" in spec else compute_table(spec, texts)
            )
        except (KeyError, ValueError, TypeError) as error:
            return [*problems, f"{where}: cannot compute {spec}: {error}"]
        if not any(matches(result, alternative) for alternative in qa["answers"]):
            problems.append(f"{where}: computed {result!r}, answers are {qa['answers']}")
        return problems
    paraphrases = qa.get("paraphrases", [])
    if not isinstance(paraphrases, list) or any(p not in qa["answers"] for p in paraphrases):
        problems.append(f"{where}: paraphrases must be a list of the answers' alternatives")
        paraphrases = []
    if paraphrases and all(a in paraphrases for a in qa["answers"]):
        problems.append(f"{where}: paraphrases need a quoted answer beside them")
    for alternative in qa["answers"]:
        terms = [alternative] if isinstance(alternative, str) else alternative
        if not terms or not all(isinstance(term, str) and term.strip() for term in terms):
            problems.append(f"{where}: an answer alternative is empty or not text")
        elif alternative not in paraphrases and (
            missing := [t for t in terms if squeeze(t) not in text]
        ):
            problems.append(f"{where}: answer {missing} not on pages {listed}")
    return problems


def check_question(number_: int, qa: dict[str, Any], texts: dict[str, list[str]]) -> list[str]:
    where = f"qa.jsonl line {number_}"
    problems = []
    for name, kind in (
        ("question", str),
        ("answers", list),
        ("kind", str),
        ("lang", str),
        ("split", str),
    ):
        if not isinstance(qa.get(name), kind):
            problems.append(f"{where}: {name} missing or not a {kind.__name__}")
    if problems:
        return problems
    if qa["kind"] not in KINDS or qa["lang"] not in LANGS or qa["split"] not in SPLITS:
        problems.append(f"{where}: kind, lang or split has an unknown value")
    if qa["lang"] == "zh" and not re.search(r"[\u4e00-\u9fff]", qa["question"]):
        problems.append(f"{where}: a zh question without Chinese characters")
    if qa["kind"] == "unanswerable" or not qa["answers"]:
        if qa["kind"] != "unanswerable" or qa["answers"] or "document" in qa or "pages" in qa:
            problems.append(f"{where}: an unanswerable line has no answers, document or pages")
        for document, terms in qa.get("absent", {}).items():
            if (pages := texts.get(document)) is None:
                problems.append(f"{where}: absent: unknown document {document!r}")
                continue
            whole = squeeze(" ".join(pages))
            problems += [
                f"{where}: {term!r} is in {document}" for term in terms if squeeze(term) in whole
            ]
        return problems
    if (pages := texts.get(qa.get("document", ""))) is None:
        return [*problems, f"{where}: unknown document {qa.get('document')!r}"]
    if not isinstance(qa.get("pages"), list):
        return [*problems, f"{where}: pages missing"]
    return problems + check_answerable(where, qa, pages)


def check_conversations(questions: list[dict[str, Any]]) -> list[str]:
    problems = []
    previous: tuple[Any, Any] | None = None
    seen: set[str] = set()
    for number_, qa in enumerate(questions, start=1):
        conversation, turn = qa.get("conversation"), qa.get("turn")
        if (qa.get("kind") == "follow_up") != (conversation is not None):
            problems.append(
                f"qa.jsonl line {number_}: follow_up lines, and only they, have a conversation"
            )
        if conversation is None:
            previous = None
            continue
        expected = previous[1] + 1 if previous and previous[0] == conversation else 1
        if turn != expected or (turn == 1 and conversation in seen):
            problems.append(
                f"qa.jsonl line {number_}: {conversation} turn {turn}, "
                f"expected turn {expected} of a new or the same conversation"
            )
        seen.add(conversation)
        previous = (conversation, turn)
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--mirror", metavar="URL", help="as `docent eval --mirror`")
    parser.add_argument("--quiet", action="store_true", help="print the failures only")
    arguments = parser.parse_args(argv[1:])
    folder = set_folder(Paths.from_environment().cache_dir, HERE / SOURCES)
    say = (lambda _line: None) if arguments.quiet else print
    try:
        sources = load_sources(HERE / SOURCES)
        paths = asyncio.run(fetch_documents(sources, folder, mirror=arguments.mirror, report=say))
    except EvalSetError as error:
        print(f"FAIL {error}")
        return 1
    problems: list[str] = []
    texts: dict[str, list[str]] = {}
    for source, path in zip(sources, paths, strict=True):
        texts[source.name] = pages = read_pages(path)
        if len(pages) != source.pages:
            problems.append(f"{source.name}: {len(pages)} pages, {SOURCES} says {source.pages}")
    questions = load_questions()
    for number_, qa in enumerate(questions, start=1):
        problems += check_question(number_, qa, texts)
    problems += check_conversations(questions)
    seen = Counter(qa.get("question") for qa in questions)
    problems += [f"asked twice: {q!r}" for q, count in seen.items() if count > 1]
    if not arguments.quiet:
        # Counts only: the questions themselves are not printed (the set is held out).
        print(f"{len(questions)} questions over {len(texts)} documents")
        for field in ("kind", "lang", "split"):
            counts = Counter(str(qa.get(field)) for qa in questions)
            print(f"  by {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        pairs = Counter(f"{qa.get('kind')}/{qa.get('lang')}" for qa in questions)
        print("  kind x lang: " + ", ".join(f"{k} {v}" for k, v in sorted(pairs.items())))
        conversations = {qa["conversation"] for qa in questions if qa.get("conversation")}
        print(f"  conversations: {len(conversations)}")
        documents = Counter(qa.get("document", "(none)") for qa in questions)
        for name, count in sorted(documents.items()):
            print(f"  {name}: {count}")
    for problem in problems:
        print(f"FAIL {problem}")
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
