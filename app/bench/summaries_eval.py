"""`docent eval --summaries SUMMARIES.jsonl`: do local summaries keep a part's key facts? Each
part is summarized on the local model and scored: the key facts kept, the false claims made,
whether the summary ends mid-sentence (cut off by its token limit), and the time it took.

A line: {"document": file name, "chapter": its number or heading words as `docent summarize
--chapter` takes them (null: the whole document), "facts": [fact, …], "false": [claim, …],
"lang"}. A fact or a false claim is a list of alternatives as a QA line's answers are (a string,
or strings that must all appear, case-insensitive; a bare string is one alternative): a fact is
kept when one of its alternatives appears, a claim is made when one of its alternatives does.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.answering import Failed, Finished
from app.bench.evaluation import Alternatives, EvalError, alternatives, matches
from app.errors import DocentError

if TYPE_CHECKING:
    from app.answering.desk import Desk

# A sentence's end, then any citation markers (" [3]", "[2][5]") and closing quotes or brackets.
_ENDS_SENTENCE = re.compile(r"[.!?。！？][\"'”’)）]*(?:\s*\[\d+\])*\s*$")


@dataclass(frozen=True, slots=True)
class SummaryCase:
    document: str
    chapter: str | None
    facts: tuple[Alternatives, ...]
    false: tuple[Alternatives, ...]
    lang: str = "en"

    @property
    def part(self) -> str:
        return "whole" if self.chapter is None else self.chapter


def _claims(raw: Sequence[str | Sequence[str | Sequence[str]]]) -> tuple[Alternatives, ...]:
    return tuple(alternatives([claim] if isinstance(claim, str) else claim) for claim in raw)


def load_cases(path: Path) -> list[SummaryCase]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise EvalError(f"cannot read {path}: {error.strerror}") from None
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw: dict[str, Any] = json.loads(line)
            chapter = raw.get("chapter")
            cases.append(
                SummaryCase(
                    document=str(raw["document"]),
                    chapter=None if chapter is None else str(chapter),
                    facts=_claims(raw["facts"]),
                    false=_claims(raw.get("false", [])),
                    lang=raw.get("lang", "en"),
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise EvalError(f"{path}, line {number}: not a summary line ({error})") from None
    if not cases:
        raise EvalError(f"{path} holds no parts to summarize")
    return cases


def ends_mid_sentence(summary: str) -> bool:
    """The summary's last sentence is unfinished: it does not end in . ! ? 。 ！ ？ (a closing
    quote or a citation marker may follow)."""
    return _ENDS_SENTENCE.search(summary) is None


def score(case: SummaryCase, summary: str) -> dict[str, Any]:
    """The facts kept, the false claims made and whether the text is cut off, for `summary`."""
    kept = [matches(summary, fact) for fact in case.facts]
    made = [claim for claim in case.false if matches(summary, claim)]
    missed = [fact for fact, held in zip(case.facts, kept, strict=True) if not held]
    return {
        "facts_kept": sum(kept) / len(kept) if kept else None,
        "facts_missed": [[list(terms) for terms in fact] for fact in missed],
        "false_claims": len(made),
        "false_made": [[list(terms) for terms in claim] for claim in made],
        "mid_sentence": ends_mid_sentence(summary),
    }


async def evaluate_summaries(
    desk: Desk, cases: Sequence[SummaryCase], documents: Mapping[str, int]
) -> list[dict[str, Any]]:
    """Each case's part summarized on the local model (`documents`: each name's library id)."""
    rows = []
    for case in cases:
        row: dict[str, Any] = {"document": case.document, "part": case.part, "lang": case.lang}
        started = time.perf_counter()
        try:
            job = await desk.summary(documents[case.document], case.chapter)
            row["steps"] = job.plan.steps
            started = time.perf_counter()  # loading the model (the first part's) is not its time
            # Made afresh (never the stored one), and never in place of the user's own.
            async for event in job.run("local", replace_stored=False):
                if isinstance(event, Finished):
                    row |= score(case, event.answer) | {"summary": event.answer}
                elif isinstance(event, Failed):
                    row["error"] = event.error
        except DocentError as error:  # no such chapter, no text
            row["error"] = str(error)
        row["time_s"] = time.perf_counter() - started
        rows.append(row)
    return rows


def summaries_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| document | part | lang | steps | key facts kept | false claims | ends mid-sentence "
        "| time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "summary" not in row:
            lines.append(
                f"| {row['document']} | {row['part']} | {row['lang']} | {row.get('steps', '–')} "
                f"| failed: {row.get('error', 'no summary')} | – | – | {row['time_s']:.1f} s |"
            )
            continue
        facts = row["facts_kept"]
        lines.append(
            f"| {row['document']} | {row['part']} | {row['lang']} | {row['steps']} | "
            + ("–" if facts is None else f"{facts:.0%}")
            + f" | {row['false_claims']} | {'yes' if row['mid_sentence'] else 'no'} | "
            f"{row['time_s']:.1f} s |"
        )
    done = [row for row in rows if "summary" in row]
    scored = [row["facts_kept"] for row in done if row["facts_kept"] is not None]
    lines.append(
        f"| all | {len(done)} of {len(rows)} summarized | | "
        f"{sum(row.get('steps', 0) for row in rows)} | "
        + (f"{sum(scored) / len(scored):.0%}" if scored else "–")
        + f" | {sum(row['false_claims'] for row in done)} | "
        f"{sum(row['mid_sentence'] for row in done)} | "
        f"{sum(row['time_s'] for row in rows):.1f} s |"
    )
    return "\n".join(lines)
