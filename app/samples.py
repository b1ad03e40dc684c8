"""The documents Docent ships and questions they answer, so that an empty window can offer
something to try: the guide indexed on the first run (the two questions it suggests itself),
and the sample documents (the lookups of the evaluation set shipped for them)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path

GUIDE = "welcome-to-docent.md"  # indexed on the first run
# Two questions the guide answers, as the bundled 0.5B model answers them on a first run (it
# declines "How do I add a cloud model?": its draft says the answer is not there).
GUIDE_QUESTIONS = ("Where does Docent keep my documents?", "Where are cloud keys stored?")
SAMPLES = ("northwind-retention-policy.pdf", "china-tea-primer.pdf")


# One path argument each: the packaged app's `resources` is a namespace package, whose
# MultiplexedPath.joinpath takes a single one on Python 3.11.
def sample_path(name: str) -> Path:
    return Path(str(resources.files("resources").joinpath(f"sample/{name}")))


def shipped_questions_path() -> Path:
    return Path(str(resources.files("resources").joinpath("eval/samples-qa.jsonl")))


def sample_questions(indexed: Iterable[str], per_document: int = 2) -> list[str]:
    """The guide's questions when the guide is among the `indexed` file names, then up to
    `per_document` single-fact questions for each sample among them, in the set's order
    (English before Chinese where the set has both)."""
    names = set(indexed)
    taken: Counter[str] = Counter()
    chosen = list(GUIDE_QUESTIONS[:per_document]) if GUIDE in names else []
    for document, question in _lookups():
        if document in names and taken[document] < per_document:
            taken[document] += 1
            chosen.append(question)
    return chosen


@cache  # the window asks after every change to the library, on the GUI thread: read once
def _lookups() -> tuple[tuple[str, str], ...]:
    """The shipped set's single-fact questions: (document, question), in the set's order
    (read plainly: the window has no use for the evaluation's reader)."""
    lines = shipped_questions_path().read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    return tuple((qa["document"], qa["question"]) for qa in questions if qa.get("kind") == "lookup")
