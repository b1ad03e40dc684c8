"""Check the manuals evaluation set against the documents as Docent reads them.

    .venv/bin/python resources/eval/manuals/verify.py [--mirror URL]

The documents are the ones `docent eval resources/eval/manuals/qa.jsonl` uses: fetched, with
their hashes checked, into Docent's cache (app.bench.eval_set) unless they are there already.
Each document is read with Docent's own parser (`app.documents.parse.open_document`), so a page
here is the page Docent indexes and cites: its 1-based physical number, not the printed label.
Checked:

- every document's page count is the one sources.toml records;
- every line of qa.jsonl is a QA line `docent eval` reads, with `kind` (lookup, combine), `lang`
  (en, zh), `split` (tune, holdout) and `evidence`: a quote of at most 200 characters, or, for a
  question whose pages are several, one quote per page in the order of `pages`;
- each evidence quote is on its page (whitespace aside, as layout breaks lines anywhere);
- each answer alternative's strings are on the question's pages (case aside), except for a
  computed answer (`"computed": true`, combine only), which is the result of arithmetic on
  values that the evidence holds, and for the alternatives listed in `paraphrases`: the quoted
  answer written another way ("11" for "eleven", "2015-03-19" for "March 19, 2015"), which
  stand beside at least one alternative that is quoted;
- every line of follow_ups.jsonl is such a line too, of kind follow_up, with a `conversation`
  (its id) and a `turn`: each conversation's turns are 1, 2, … in the file's order (at least
  two), its lines follow one another and share one split; besides, each quoted answer is in the
  evidence itself, not only on its pages (a later turn is asked without naming what it asks
  about, so its evidence must be the very sentence that answers it).

Prints a summary (questions by kind, language, split and document; follow-ups by language and
split, and how many later turns have their evidence on a page of an earlier turn) and exits 1
on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

KINDS = {"lookup", "combine"}
FOLLOW_UPS = "follow_ups.jsonl"
LANGS = {"en", "zh"}
SPLITS = {"tune", "holdout"}
MAX_EVIDENCE = 200
MAX_UNPACKED = 100 << 20  # Docent's default limit for an EPUB's unpacked size
_SPACE = re.compile(r"\s+")


def squeeze(text: str) -> str:
    """Text without any whitespace, case folded: MuPDF breaks lines anywhere (inside a CJK
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
    """The 1-based numbers of the pages that hold `quote`."""
    wanted = squeeze(quote)
    return [number for number, text in enumerate(pages, start=1) if wanted in squeeze(text)]


def check_question(
    number: int,
    qa: dict[str, Any],
    pages: list[str],
    file: str = "qa.jsonl",
    kinds: set[str] = KINDS,
) -> list[str]:
    where = f"{file} line {number}"
    problems = []
    for name, kind in (
        ("question", str),
        ("answers", list),
        ("document", str),
        ("pages", list),
        ("kind", str),
        ("lang", str),
        ("split", str),
    ):
        if not isinstance(qa.get(name), kind):
            problems.append(f"{where}: {name} missing or not a {kind.__name__}")
    if problems:
        return problems
    if qa["kind"] not in kinds or qa["lang"] not in LANGS or qa["split"] not in SPLITS:
        problems.append(f"{where}: kind, lang or split has an unknown value")
    listed = qa["pages"]
    if not listed or not all(isinstance(p, int) and 1 <= p <= len(pages) for p in listed):
        return [*problems, f"{where}: pages {listed} not within 1..{len(pages)}"]
    evidence = qa.get("evidence")
    quotes = [evidence] if isinstance(evidence, str) else evidence
    if not isinstance(quotes, list) or not all(isinstance(q, str) and q for q in quotes):
        return [*problems, f"{where}: evidence must be a quote or a list of quotes"]
    if len(quotes) == 1:
        quotes = quotes * len(listed)  # one quote that every listed page holds
    if len(quotes) != len(listed):
        problems.append(f"{where}: {len(quotes)} evidence quotes for {len(listed)} pages")
    for quote, page in zip(quotes, listed, strict=False):
        if len(quote) > MAX_EVIDENCE:
            problems.append(f"{where}: evidence longer than {MAX_EVIDENCE} characters")
        if page not in (found := pages_with(quote, pages)):
            problems.append(f"{where}: evidence {quote!r} not on page {page} (found on {found})")
    computed = qa.get("computed", False)
    if computed and qa["kind"] != "combine":
        problems.append(f"{where}: only a combine question may have a computed answer")
    paraphrases = qa.get("paraphrases", [])
    if not isinstance(paraphrases, list) or any(p not in qa["answers"] for p in paraphrases):
        problems.append(f"{where}: paraphrases must be a list of the answers' alternatives")
        paraphrases = []
    if paraphrases and (computed or all(a in paraphrases for a in qa["answers"])):
        problems.append(f"{where}: paraphrases need a quoted answer beside them")
    text = squeeze(" ".join(pages[page - 1] for page in listed))
    for alternative in qa["answers"]:
        terms = [alternative] if isinstance(alternative, str) else alternative
        quoted = not computed and alternative not in paraphrases
        if not terms or not all(isinstance(term, str) and term.strip() for term in terms):
            problems.append(f"{where}: an answer alternative is empty or not text")
        elif quoted and (missing := [t for t in terms if squeeze(t) not in text]):
            problems.append(f"{where}: answer {missing} not on pages {listed}")
    return problems


def check_follow_up(number: int, qa: dict[str, Any], pages: list[str]) -> list[str]:
    """A line of follow_ups.jsonl: a QA line of kind follow_up, in a conversation, whose quoted
    answers its evidence states."""
    where = f"{FOLLOW_UPS} line {number}"
    problems = check_question(number, qa, pages, FOLLOW_UPS, {"follow_up"})
    if not isinstance(qa.get("conversation"), str) or not qa["conversation"]:
        problems.append(f"{where}: conversation missing or not a str")
    turn = qa.get("turn")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        problems.append(f"{where}: turn missing or not a number from 1")
    if qa.get("computed", False):
        problems.append(f"{where}: a follow-up's answer is quoted, not computed")
    evidence = qa.get("evidence")
    quotes = [evidence] if isinstance(evidence, str) else evidence
    if problems or not isinstance(quotes, list) or not isinstance(qa.get("answers"), list):
        return problems
    said = squeeze(" ".join(q for q in quotes if isinstance(q, str)))
    paraphrases = qa.get("paraphrases", [])
    for alternative in qa["answers"]:
        terms = [alternative] if isinstance(alternative, str) else alternative
        if isinstance(paraphrases, list) and alternative in paraphrases:
            continue
        if missing := [t for t in terms if isinstance(t, str) and squeeze(t) not in said]:
            problems.append(f"{where}: answer {missing} not in its evidence")
    return problems


def check_conversations(follow_ups: list[dict[str, Any]]) -> list[str]:
    """Each conversation: its lines one after another, turns 1, 2, … in order, one split."""
    problems = []
    runs: list[tuple[str, list[dict[str, Any]]]] = []
    for qa in follow_ups:
        name = str(qa.get("conversation"))
        if runs and runs[-1][0] == name:
            runs[-1][1].append(qa)
        else:
            runs.append((name, [qa]))
    seen = Counter(name for name, _turns in runs)
    problems += [
        f"{FOLLOW_UPS}: conversation {n!r} is split apart" for n, c in seen.items() if c > 1
    ]
    for name, turns in runs:
        if len(turns) < 2:
            problems.append(f"{FOLLOW_UPS}: conversation {name!r} has no follow-up")
        if [qa.get("turn") for qa in turns] != list(range(1, len(turns) + 1)):
            problems.append(f"{FOLLOW_UPS}: conversation {name!r}: turns are not 1, 2, … in order")
        if len({qa.get("split") for qa in turns}) > 1:
            problems.append(f"{FOLLOW_UPS}: conversation {name!r}: its turns have several splits")
    return problems


def same_page_turns(follow_ups: list[dict[str, Any]]) -> tuple[int, int]:
    """The later turns whose pages include a page of an earlier turn of their conversation (in the
    same document), and those whose evidence is elsewhere: the harder ones to retrieve."""
    same = other = 0
    earlier: dict[str, set[tuple[Any, Any]]] = {}
    for qa in follow_ups:
        pages = {(qa.get("document"), p) for p in qa.get("pages", [])}
        before = earlier.setdefault(str(qa.get("conversation")), set())
        if qa.get("turn") != 1:
            if pages & before:
                same += 1
            else:
                other += 1
        before |= pages
    return same, other


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--mirror", metavar="URL", help="as `docent eval --mirror`")
    arguments = parser.parse_args(argv[1:])
    folder = set_folder(Paths.from_environment().cache_dir, HERE / SOURCES)
    try:
        sources = load_sources(HERE / SOURCES)
        paths = asyncio.run(fetch_documents(sources, folder, mirror=arguments.mirror, report=print))
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
    for number, qa in enumerate(questions, start=1):
        if (pages := texts.get(qa.get("document", ""))) is None:
            problems.append(f"qa.jsonl line {number}: unknown document {qa.get('document')!r}")
            continue
        problems += check_question(number, qa, pages)
    follow_ups = load_questions(HERE / FOLLOW_UPS)
    for number, qa in enumerate(follow_ups, start=1):
        if (read := texts.get(qa.get("document", ""))) is None:
            problems.append(f"{FOLLOW_UPS} line {number}: unknown document {qa.get('document')!r}")
            continue
        problems += check_follow_up(number, qa, read)
    problems += check_conversations(follow_ups)
    seen = Counter(qa.get("question") for qa in [*questions, *follow_ups])
    problems += [f"asked twice: {q!r}" for q, count in seen.items() if count > 1]

    print(f"{len(questions)} questions over {len(texts)} documents")
    for field in ("kind", "lang", "split"):
        print(
            f"  by {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(_count(questions, field)))
        )
    kinds = _count(questions, "kind", "split")
    print("  kind x split: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds)))
    for name, count in sorted(_count(questions, "document")):
        print(f"  {name}: {count}")
    conversations = {qa.get("conversation"): qa.get("split") for qa in follow_ups}
    same, other = same_page_turns(follow_ups)
    print(
        f"{len(follow_ups)} follow-up lines in {len(conversations)} conversations"
        f" ({same} later turns on an earlier turn's page, {other} on another page)"
    )
    for field in ("lang", "split"):
        print(
            f"  by {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(_count(follow_ups, field)))
        )
    splits = Counter(conversations.values())
    print("  conversations by split: " + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())))
    for problem in problems:
        print(f"FAIL {problem}")
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


def _count(questions: list[dict[str, Any]], *fields: str) -> list[tuple[str, int]]:
    return list(Counter("/".join(str(qa.get(f)) for f in fields) for qa in questions).items())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
