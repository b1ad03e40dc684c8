"""The router's confusion matrix from evaluated answers, and thresholds fitted to them."""

from __future__ import annotations

from typing import Any

from app.bench.evaluation import confusion, fit_thresholds, routed_right, router_table
from app.routing import Thresholds


def answer(question: str, similarity: float, correct: bool, split: str = "tune") -> dict[str, Any]:
    return {
        "question": question,
        "similarity": similarity,
        "margin": 0.05,
        "documents": 1,
        "correct": correct,
        "split": split,
        "kind": "lookup",
        "answerable": True,
    }


# The local model is right where retrieval is confident, wrong where it is not: a weak-evidence
# threshold between 0.84 and 0.86, escalating on that one reason, routes every question right.
ANSWERS = [
    answer("Which port does the server use?", 0.91, True),
    answer("Who maintains the package?", 0.88, True),
    answer("Which flag disables the cache?", 0.86, True),
    answer("Which version added the option?", 0.84, False),
    answer("What is the default timeout?", 0.80, False),
]


def test_the_matrix_counts_each_question_once_in_its_cell() -> None:
    cells = confusion(ANSWERS, Thresholds(weak_similarity=0.82, escalate_at=1))
    assert cells == {"kept_right": 3, "kept_wrong": 1, "escalated_right": 0, "escalated_wrong": 1}
    assert routed_right(cells) == 4 / 5


def test_fitted_thresholds_escalate_the_questions_the_local_model_got_wrong() -> None:
    fitted = fit_thresholds(ANSWERS)
    assert 0.84 < fitted.weak_similarity <= 0.86
    assert fitted.escalate_at == 1
    assert confusion(ANSWERS, fitted) == {
        "kept_right": 3,
        "kept_wrong": 0,
        "escalated_right": 0,
        "escalated_wrong": 2,
    }


def test_the_table_fits_on_tune_and_reports_the_held_out_split_too() -> None:
    held_out = [answer("Which license covers the docs?", 0.83, False, "holdout")]
    row = {"mode": "local only", "answers": [*ANSWERS, *held_out]}
    table = router_table([row])
    fitted = [line for line in table.splitlines() if line.startswith("| fitted on tune")]
    assert [line.split(" | ")[1] for line in fitted] == ["holdout", "tune"]
    assert fitted[0].endswith("| 0 | 0 | 0 | 1 | 100% | 0 |")  # its wrong answer escalated
    assert router_table([{"mode": "auto", "answers": []}]).startswith("(the router table needs")


def test_a_wrong_answer_kept_costs_more_than_a_needless_escalation() -> None:
    # The two computations look alike to the router; escalating both (one needlessly) beats
    # keeping the wrong one.
    answers = [
        answer("How many days did the freeze last?", 0.91, False),
        answer("How many mirrors carry the package?", 0.91, True),
        answer("Which port does the server use?", 0.91, True),
    ]
    cells = confusion(answers, fit_thresholds(answers))
    assert cells == {"kept_right": 1, "kept_wrong": 0, "escalated_right": 1, "escalated_wrong": 1}


def test_without_a_tune_split_the_fit_says_it_saw_the_answers_it_is_checked_on() -> None:
    held_out = [{**a, "split": "holdout"} for a in ANSWERS]
    table = router_table([{"mode": "local only", "answers": held_out}])
    assert "| fitted on these same answers: " in table
    assert "fitted on tune" not in table


def test_questions_the_documents_do_not_answer_stay_out_of_the_router_table() -> None:
    """No route can answer them: they measure declining, not routing."""
    declined = [
        {**answer(f"Who won in {year}?", 0.70, True), "kind": "unanswerable", "answerable": False}
        for year in (1990, 1991)
    ]
    assert router_table([{"mode": "local only", "answers": ANSWERS}]) == router_table(
        [{"mode": "local only", "answers": ANSWERS + declined}]
    )
    only_declined = router_table([{"mode": "local only", "answers": declined}])
    assert only_declined == "(no question here has an answer: nothing to route)"
