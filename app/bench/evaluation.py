"""`docent eval QA.jsonl`: does the router pay? The same questions through local only, cloud
only and auto, in one table: accuracy, citation page hit rate, share answered locally, total
cost, median time to first token and retrieval recall (an evidence page among the passages
given to the model); then the same per kind, language and split; then the router's confusion
matrix on the local-only answers (would it have escalated the ones the local model got wrong?).

A QA line: {"question", "answers": [alternative, …], "document": file name, "pages": [n, …]},
optionally "kind" (lookup | combine), "lang", "split" (tune | holdout: what tuning may not look
at) and "evidence" (a quote from the page). An alternative is a string, or a list of strings
that must all appear (case-insensitive). A question the documents do not answer has no answers,
document or pages (kind "unanswerable"): it is right when Docent declines it, and an answerable
one is wrong when declined.
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.answering import Failed, Finished, Source, SourcesFound
from app.errors import DocentError
from app.routing import QuestionFeatures, RetrievalConfidence, Route, Thresholds, hardness

if TYPE_CHECKING:
    from app.answering.desk import Desk

MODES: dict[str, Route | None] = {"local only": "local", "cloud only": "cloud", "auto": None}


class EvalError(DocentError):
    """The question set cannot be read."""


@dataclass(frozen=True, slots=True)
class QA:
    question: str
    answers: tuple[tuple[str, ...], ...]
    document: str
    pages: tuple[int, ...]
    kind: str = "lookup"
    lang: str = "en"
    split: str = "tune"

    @property
    def answerable(self) -> bool:
        return bool(self.answers)

    def correct(self, finished: Finished) -> bool:
        if not self.answerable:
            return finished.unsupported_draft is not None
        folded = finished.answer.casefold()
        return finished.unsupported_draft is None and any(
            all(term.casefold() in folded for term in terms) for terms in self.answers
        )

    def cited(self, citations: Sequence[Source]) -> bool:
        """A cited page is an evidence page (page-citation accuracy)."""
        return any(s.document == self.document and s.page in self.pages for s in citations)

    def retrieved(self, sources: Sequence[Source]) -> bool:
        """An evidence page is among the passages the model was given (retrieval recall)."""
        return self.cited(sources)


def load_questions(path: Path) -> list[QA]:
    questions = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise EvalError(f"cannot read {path}: {error.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw: dict[str, Any] = json.loads(line)
            questions.append(
                QA(
                    question=raw["question"],
                    answers=tuple(
                        (answer,) if isinstance(answer, str) else tuple(answer)
                        for answer in raw["answers"]
                    ),
                    document=raw.get("document", "") if raw["answers"] else "",
                    pages=tuple(raw["pages"] if raw["answers"] else ()),
                    kind=raw.get("kind", "lookup" if raw["answers"] else "unanswerable"),
                    lang=raw.get("lang", "en"),
                    split=raw.get("split", "tune"),
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise EvalError(f"{path}, line {number}: not a QA line ({error})") from None
    if not questions:
        raise EvalError(f"{path} holds no questions")
    return questions


@dataclass
class ModeResult:
    mode: str
    answered: int = 0
    correct: int = 0
    cited: int = 0
    retrieved: int = 0
    declined: int = 0  # of the answerable questions: wrongly
    declined_unanswerable: int = 0  # rightly
    local: int = 0
    cost_usd: float = 0.0  # of the answers with a known cost
    unpriced: int = 0  # answers of unknown cost
    ttfts: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)

    def row(self, questions: Sequence[QA]) -> dict[str, Any]:
        # Citations and retrieval have an evidence page to hit only where the documents answer.
        answerable = sum(qa.answerable for qa in questions)
        unanswerable = len(questions) - answerable
        return {
            "mode": self.mode,
            "questions": len(questions),
            "accuracy": self.correct / len(questions),
            "citation_page_hits": self.cited / answerable if answerable else None,
            "retrieval_recall": self.retrieved / answerable if answerable else None,
            "declined_answerable": self.declined / answerable if answerable else None,
            "declined_unanswerable": (
                self.declined_unanswerable / unanswerable if unanswerable else None
            ),
            "answered_locally": self.local / len(questions),
            "cost_usd": self.cost_usd,
            "unpriced_answers": self.unpriced,
            "median_ttft_s": statistics.median(self.ttfts) if self.ttfts else None,
            "failures": self.failures,
            "answers": self.answers,
        }


async def evaluate(
    desk: Desk, questions: Sequence[QA], modes: Sequence[str]
) -> list[dict[str, Any]]:
    rows = []
    for mode in modes:
        result = ModeResult(mode)
        for qa in questions:
            given: tuple[Source, ...] = ()
            evidence: RetrievalConfidence | None = None  # what the router read, for its table
            async for event in desk.ask(qa.question, route=MODES[mode]):
                if isinstance(event, SourcesFound):
                    given, evidence = event.sources, event.evidence
                    result.retrieved += qa.retrieved(given)
                elif isinstance(event, Finished):
                    metrics = event.metrics
                    result.answered += 1
                    result.correct += qa.correct(event)
                    result.cited += qa.cited(event.citations)
                    declined = event.unsupported_draft is not None
                    if qa.answerable:
                        result.declined += declined
                    else:
                        result.declined_unanswerable += declined
                    result.local += metrics.route in ("local", "fallback")
                    if metrics.cost_usd is None:
                        result.unpriced += 1
                    else:
                        result.cost_usd += metrics.cost_usd
                    if metrics.ttft_s is not None:
                        result.ttfts.append(metrics.ttft_s)
                    result.answers.append(
                        {
                            "question": qa.question,
                            "route": metrics.route,
                            "reason": metrics.reason,
                            "correct": qa.correct(event),
                            "declined": declined,
                            "cited": qa.cited(event.citations),
                            "retrieved": qa.retrieved(given),
                            "kind": qa.kind,
                            "lang": qa.lang,
                            "split": qa.split,
                            "similarity": evidence.top_similarity if evidence else None,
                            "margin": evidence.margin if evidence else None,
                            "documents": evidence.documents if evidence else 0,
                            "answer": event.unsupported_draft or event.answer,
                        }
                    )
                elif isinstance(event, Failed):
                    result.failures.append(f"{qa.question}: {event.error}")
        rows.append(result.row(questions))
    return rows


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| mode | accuracy | citation page hits | answered locally | total cost | median TTFT "
        "| retrieval recall | declined: unanswerable / answerable |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ttft = row["median_ttft_s"]
        unpriced = row["unpriced_answers"]
        cost = f"${row['cost_usd']:.4f}" + (f" + {unpriced} unknown" if unpriced else "")
        lines.append(
            f"| {row['mode']} | {row['accuracy']:.0%} | {_share(row['citation_page_hits'])} | "
            f"{row['answered_locally']:.0%} | {cost} | "
            + ("–" if ttft is None else f"{ttft:.2f} s")
            + f" | {_share(row['retrieval_recall'])} | {_share(row['declined_unanswerable'])}"
            f" / {_share(row['declined_answerable'])} |"
        )
    return "\n".join(lines)


def breakdown(rows: Sequence[dict[str, Any]]) -> str:
    """Accuracy, retrieval recall, citation hits and declines per mode and kind, language and
    split (recall and citations of the answerable questions)."""
    lines = [
        "| mode | group | questions | accuracy | retrieval recall | citation page hits "
        "| declined |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for field_name in ("kind", "lang", "split"):
            groups: dict[str, list[dict[str, Any]]] = {}
            for answer in row["answers"]:
                groups.setdefault(answer[field_name], []).append(answer)
            for group, answers in sorted(groups.items()):
                count = len(answers)
                answerable = [a for a in answers if a["kind"] != "unanswerable"]

                def among_answerable(key: str, of: list[dict[str, Any]] = answerable) -> str:
                    return _share(sum(a[key] for a in of) / len(of) if of else None)

                lines.append(
                    f"| {row['mode']} | {field_name} {group} | {count} | "
                    f"{sum(a['correct'] for a in answers) / count:.0%} | "
                    f"{among_answerable('retrieved')} | {among_answerable('cited')} | "
                    f"{sum(a['declined'] for a in answers) / count:.0%} |"
                )
    return "\n".join(lines)


# --- the router against what the local model really got right ------------------------------


def would_escalate(answer: dict[str, Any], thresholds: Thresholds) -> bool:
    """The auto router's call on an evaluated question, had a cloud route been up."""
    evidence = RetrievalConfidence(
        answer["similarity"], answer["margin"], False, answer["documents"]
    )
    return thresholds.escalates(hardness(_features(answer["question"]), evidence, thresholds))


@functools.cache  # the fit reads every question thousands of times
def _features(question: str) -> QuestionFeatures:
    return QuestionFeatures.read(question)


def confusion(answers: Sequence[dict[str, Any]], thresholds: Thresholds) -> dict[str, int]:
    """Kept local and right / kept local and wrong / escalated, of local-only answers."""
    cells = {"kept_right": 0, "kept_wrong": 0, "escalated_right": 0, "escalated_wrong": 0}
    for answer in answers:
        kept = "escalated" if would_escalate(answer, thresholds) else "kept"
        cells[f"{kept}_{'right' if answer['correct'] else 'wrong'}"] += 1
    return cells


def routed_right(cells: dict[str, int]) -> float:
    """The share of questions sent where they belong: right ones kept, wrong ones escalated."""
    total = sum(cells.values())
    return (cells["kept_right"] + cells["escalated_wrong"]) / total if total else 0.0


# A wrong answer shown costs this many escalations that were not needed: a cloud answer costs
# cents, a wrong one the user's trust (and the user may act on it).
WRONG_ANSWER_COST = 2.0


def routing_cost(cells: dict[str, int]) -> float:
    return WRONG_ANSWER_COST * cells["kept_wrong"] + cells["escalated_right"]


def fit_thresholds(answers: Sequence[dict[str, Any]]) -> Thresholds:
    """The thresholds of least routing cost (wrong answers kept, needless escalations); on a
    tie, the fewer escalations (each costs money and sends text out)."""
    similarities = sorted({a["similarity"] for a in answers if a["similarity"] is not None})
    best: tuple[float, int] | None = None
    fitted = Thresholds()
    for weak in [0.0, *similarities]:
        for margin in (0.0, 0.005, 0.01, 0.02):
            for long_tokens in (30, 40, 60):
                for escalate_at, alone in itertools.product((1, 2, 3), (False, True)):
                    candidate = Thresholds(weak, margin, long_tokens, escalate_at, alone)
                    cells = confusion(answers, candidate)
                    score = (
                        routing_cost(cells),
                        cells["escalated_right"] + cells["escalated_wrong"],
                    )
                    if best is None or score < best:
                        best, fitted = score, candidate
    return fitted


def router_table(rows: Sequence[dict[str, Any]]) -> str:
    """The router's confusion matrix on the local-only answers: with the shipped thresholds,
    and with thresholds fitted on the tune split (checked on the held-out one). Cost: a wrong
    answer kept counts WRONG_ANSWER_COST, a needless escalation 1."""
    local = next((row for row in rows if row["mode"] == "local only"), None)
    if local is None:
        return "(the router table needs the local only mode)"
    by_split: dict[str, list[dict[str, Any]]] = {}
    for answer in local["answers"]:
        if answer["kind"] != "unanswerable":  # no route can answer it: it is for declining
            by_split.setdefault(answer["split"], []).append(answer)
    if not by_split:
        return "(no question here has an answer: nothing to route)"
    fitted = fit_thresholds(by_split.get("tune", [a for split in by_split.values() for a in split]))
    # Without a tune split (`--split holdout`) the fit has seen the answers it is checked on.
    fitted_name = "fitted on tune" if "tune" in by_split else "fitted on these same answers"
    lines = [
        "| thresholds | split | kept local, right | kept local, wrong | escalated, local "
        "was right | escalated, local was wrong | routed right | cost |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, thresholds in (("shipped", Thresholds()), (fitted_name, fitted)):
        label = (
            f"{name}: weak < {thresholds.weak_similarity:.3f}, tie < "
            f"{thresholds.ambiguous_margin}, long > {thresholds.long_question_tokens} tokens, "
            f"escalate at {thresholds.escalate_at}"
            + (", a computation alone" if thresholds.computation_alone else "")
        )
        for split, answers in sorted(by_split.items()):
            cells = confusion(answers, thresholds)
            lines.append(
                f"| {label} | {split} | {cells['kept_right']} | {cells['kept_wrong']} | "
                f"{cells['escalated_right']} | {cells['escalated_wrong']} | "
                f"{routed_right(cells):.0%} | {routing_cost(cells):g} |"
            )
    return "\n".join(lines)
