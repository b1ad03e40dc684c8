"""`docent eval QA.jsonl`: does the router pay? The same questions through local only, cloud
only and auto, in one table: accuracy, citation page hit rate, share answered locally, total
cost, median time to first token, retrieval recall (an evidence page among the passages given
to the model), the declines, the wrong answers shown (not declined) and how far the answers
shown can be trusted (right among those not declined); then the same per kind, language, split
and conversation turn (first or later); then the router's confusion matrix on the local-only
answers (would it have escalated the ones the local model got wrong?).

A QA line: {"question", "answers": [alternative, …], "document": file name, "pages": [n, …]},
optionally "kind" (lookup | combine | table | follow_up), "lang", "split" (tune | holdout: what
tuning may not look at) and "evidence" (a quote from the page). An alternative is a string, or
a list of strings that must all appear (case-insensitive). A question the documents do not
answer has no answers, document or pages (kind "unanswerable"): it is right when Docent
declines it, and an answerable one is wrong when declined.

A line with "conversation": "<id>" and "turn": n is the n-th question of that conversation: the
turns (1, 2, … in one split) are asked in order in one Conversation, each scored on its own.
"""

from __future__ import annotations

import functools
import itertools
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.answering import Failed, Finished, Source, SourcesFound
from app.answering.conversation import Conversation
from app.errors import DocentError
from app.routing import QuestionFeatures, RetrievalConfidence, Route, Thresholds, hardness

if TYPE_CHECKING:
    from app.answering.desk import Desk

MODES: dict[str, Route | None] = {"local only": "local", "cloud only": "cloud", "auto": None}


class EvalError(DocentError):
    """The question set cannot be read."""


Alternatives = tuple[tuple[str, ...], ...]


def alternatives(raw: Sequence[str | Sequence[str]]) -> Alternatives:
    """A QA line's answers as alternatives: a string, or strings that must all appear."""
    return tuple((item,) if isinstance(item, str) else tuple(item) for item in raw)


def matches(text: str, wanted: Alternatives) -> bool:
    """One alternative's strings all appear in `text` (case aside)."""
    folded = text.casefold()
    return any(all(term.casefold() in folded for term in terms) for terms in wanted)


@dataclass(frozen=True, slots=True)
class QA:
    question: str
    answers: tuple[tuple[str, ...], ...]
    document: str
    pages: tuple[int, ...]
    kind: str = "lookup"
    lang: str = "en"
    split: str = "tune"
    conversation: str | None = None  # asked after this conversation's earlier turns
    turn: int = 1

    @property
    def answerable(self) -> bool:
        return bool(self.answers)

    def correct(self, finished: Finished) -> bool:
        if not self.answerable:
            return finished.unsupported_draft is not None
        return finished.unsupported_draft is None and matches(finished.answer, self.answers)

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
            conversation = raw.get("conversation")
            questions.append(
                QA(
                    question=raw["question"],
                    answers=alternatives(raw["answers"]),
                    document=raw.get("document", "") if raw["answers"] else "",
                    pages=tuple(raw["pages"] if raw["answers"] else ()),
                    kind=raw.get("kind", "lookup" if raw["answers"] else "unanswerable"),
                    lang=raw.get("lang", "en"),
                    split=raw.get("split", "tune"),
                    conversation=None if conversation is None else str(conversation),
                    turn=int(raw.get("turn", 1)),
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise EvalError(f"{path}, line {number}: not a QA line ({error})") from None
    if not questions:
        raise EvalError(f"{path} holds no questions")
    for name, turns in _conversations(questions).items():
        # A gap or a split between turns would ask a follow-up without what it follows.
        if [qa.turn for qa in turns] != list(range(1, len(turns) + 1)):
            raise EvalError(f"{path}: conversation {name!r}: its turns must be 1, 2, … once each")
        if len({qa.split for qa in turns}) > 1:
            raise EvalError(f"{path}: conversation {name!r}: its turns must share one split")
    return questions


def _conversations(questions: Sequence[QA]) -> dict[str, list[QA]]:
    """Each conversation's questions in turn order."""
    grouped: dict[str, list[QA]] = {}
    for qa in questions:
        if qa.conversation is not None:
            grouped.setdefault(qa.conversation, []).append(qa)
    return {name: sorted(turns, key=lambda qa: qa.turn) for name, turns in grouped.items()}


def asked_together(questions: Sequence[QA]) -> list[list[QA]]:
    """The questions as they are asked: one alone, or a conversation's turns in order where
    the conversation's first line stands."""
    conversations = _conversations(questions)
    groups: list[list[QA]] = []
    for qa in questions:
        if qa.conversation is None:
            groups.append([qa])
        elif qa.conversation in conversations:
            groups.append(conversations.pop(qa.conversation))
    return groups


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
        wrong_shown, right_among_shown = shown_shares(self.answers, len(questions))
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
            "wrong_not_declined": wrong_shown,
            "right_among_answers": right_among_shown,
            "answered_locally": self.local / len(questions),
            "cost_usd": self.cost_usd,
            "unpriced_answers": self.unpriced,
            "median_ttft_s": statistics.median(self.ttfts) if self.ttfts else None,
            "failures": self.failures,
            "answers": self.answers,
        }

    async def ask(self, desk: Desk, qa: QA, conversation: Conversation | None) -> None:
        given: tuple[Source, ...] = ()
        evidence: RetrievalConfidence | None = None  # what the router read, for its table
        route = MODES[self.mode]
        async for event in desk.ask(qa.question, route=route, conversation=conversation):
            if isinstance(event, SourcesFound):
                given, evidence = event.sources, event.evidence
                self.retrieved += qa.retrieved(given)
            elif isinstance(event, Finished):
                metrics = event.metrics
                correct = qa.correct(event)
                declined = event.unsupported_draft is not None
                self.answered += 1
                self.correct += correct
                self.cited += qa.cited(event.citations)
                if qa.answerable:
                    self.declined += declined
                else:
                    self.declined_unanswerable += declined
                self.local += metrics.route in ("local", "fallback")
                if metrics.cost_usd is None:
                    self.unpriced += 1
                else:
                    self.cost_usd += metrics.cost_usd
                if metrics.ttft_s is not None:
                    self.ttfts.append(metrics.ttft_s)
                self.answers.append(
                    {
                        "question": qa.question,
                        "route": metrics.route,
                        "reason": metrics.reason,
                        "correct": correct,
                        "declined": declined,
                        "answerable": qa.answerable,
                        "cited": qa.cited(event.citations),
                        "retrieved": qa.retrieved(given),
                        "kind": qa.kind,
                        "lang": qa.lang,
                        "split": qa.split,
                        "conversation": qa.conversation,
                        "turn": qa.turn,
                        "similarity": evidence.top_similarity if evidence else None,
                        "margin": evidence.margin if evidence else None,
                        "documents": evidence.documents if evidence else 0,
                        # Which passages and pages, to compare two runs question by question.
                        "sources": [[s.document, s.page] for s in given],
                        "citations": [[s.document, s.page] for s in event.citations],
                        "answer": event.unsupported_draft or event.answer,
                    }
                )
            elif isinstance(event, Failed):
                self.failures.append(f"{qa.question}: {event.error}")


def shown_shares(
    answers: Sequence[dict[str, Any]], questions: int
) -> tuple[float | None, float | None]:
    """What the user is shown: wrong answers not declined (an unanswerable question answered
    counts), of `questions`; and right answers among those not declined, the share of Docent's
    answers the user can trust."""
    shown = [a for a in answers if not a["declined"]]
    wrong = sum(not a["correct"] for a in shown)
    return (
        wrong / questions if questions else None,
        (len(shown) - wrong) / len(shown) if shown else None,
    )


async def evaluate(
    desk: Desk, questions: Sequence[QA], modes: Sequence[str]
) -> list[dict[str, Any]]:
    rows = []
    for mode in modes:
        result = ModeResult(mode)
        for group in asked_together(questions):
            # One Conversation per conversation: each turn's prompt carries the turns before it.
            conversation = None if group[0].conversation is None else Conversation()
            for qa in group:
                await result.ask(desk, qa, conversation)
        rows.append(result.row(questions))
    return rows


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _share_of(answers: Sequence[dict[str, Any]], flag: str) -> str:
    """The share of `answers` whose `flag` is true ("–" for none)."""
    return _share(sum(a[flag] for a in answers) / len(answers) if answers else None)


def table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| mode | accuracy | citation page hits | answered locally | total cost | median TTFT "
        "| retrieval recall | declined: unanswerable / answerable | wrong, not declined "
        "| right among answers |",
        "|---|---|---|---|---|---|---|---|---|---|",
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
            f" / {_share(row['declined_answerable'])} | {_share(row['wrong_not_declined'])} | "
            f"{_share(row['right_among_answers'])} |"
        )
    return "\n".join(lines)


def _turn(answer: dict[str, Any]) -> str | None:
    """A conversation's first turn, or one that follows earlier turns (None: asked alone)."""
    if answer.get("conversation") is None:
        return None
    return "first" if answer["turn"] == 1 else "later"


_GROUPINGS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "kind": lambda answer: answer["kind"],
    "lang": lambda answer: answer["lang"],
    "split": lambda answer: answer["split"],
    "turn": _turn,
}


def breakdown(rows: Sequence[dict[str, Any]]) -> str:
    """Per mode and kind, language, split and conversation turn (first or later): accuracy,
    retrieval recall and citation hits (of the answerable questions), declines, wrong answers
    shown and right among the answers shown."""
    lines = [
        "| mode | group | questions | accuracy | retrieval recall | citation page hits "
        "| declined: unanswerable / answerable | wrong, not declined | right among answers |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for grouping, group_of in _GROUPINGS.items():
            groups: dict[str, list[dict[str, Any]]] = {}
            for answer in row["answers"]:
                if (group := group_of(answer)) is not None:
                    groups.setdefault(group, []).append(answer)
            for group, answers in sorted(groups.items()):
                count = len(answers)
                answerable = [a for a in answers if a["answerable"]]
                unanswerable = [a for a in answers if not a["answerable"]]
                wrong_shown, right_among_shown = shown_shares(answers, count)
                lines.append(
                    f"| {row['mode']} | {grouping} {group} | {count} | "
                    f"{_share_of(answers, 'correct')} | {_share_of(answerable, 'retrieved')} | "
                    f"{_share_of(answerable, 'cited')} | {_share_of(unanswerable, 'declined')} / "
                    f"{_share_of(answerable, 'declined')} | {_share(wrong_shown)} | "
                    f"{_share(right_among_shown)} |"
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
        if answer["answerable"]:  # no route can answer the others: they are for declining
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
