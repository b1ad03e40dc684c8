"""The session panel: a one-line footer that unfolds; an answer of unknown cost is counted as
such, never as free; the month's spending is a bar against the budget; no money and no budget
show while no cloud is set up, and no empty chart; the panel folds away."""

from __future__ import annotations

import qasync
from pytestqt.qtbot import QtBot

from app.answering.budget import Budget
from app.answering.metrics import AnswerMetrics
from app.bootstrap import Docent
from ui.window.session_panel import SessionPanel


def _budget(
    docent: Docent, loop: qasync.QEventLoop, monthly_usd: float, *costs: float | None
) -> Budget:
    """The library's budget (a fresh library: nothing spent yet), then these answers' costs."""
    budget = docent.desk.budget
    budget.monthly_usd = monthly_usd
    loop.run_until_complete(budget.load())
    for cost in costs:
        budget.spend(cost)
    return budget


def test_answers_of_unknown_cost_are_counted_apart(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.show_cloud(True)
    session.add(AnswerMetrics("cloud", "gw/priced", "why", 0.01, 0.5, 1.0, 1000, 10, 20.0, 0.25))
    session.add(AnswerMetrics("cloud", "gw/unpriced", "why", 0.01, 0.5, 1.0, 1000, 10, 20.0, None))
    session.show_spending(_budget(docent, loop, 5.0, 0.25, None))
    assert session.toggle.text() == "2 answers · $0.25 of $5 this month · 2 cloud"
    assert session.summary.text() == (
        "This session: 2 answers (2 cloud) · cost $0.25 + 1 of unknown cost"
    )
    assert session.spending.text() == (
        "Cloud budget: $0.25 of $5.00 this month + 1 answer of unknown cost"
    )
    assert session.budget.value() == 50  # per mille: 5 %
    assert (
        AnswerMetrics("cloud", "m", "r", 0, 0.5, 1, 1, 1, None, None)
        .footer()
        .endswith("1+1 tokens · cost unknown")
    )


def test_the_budget_bar_is_full_when_the_month_is_spent_or_there_is_no_budget(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.show_cloud(True)
    session.show_spending(_budget(docent, loop, 0.0))
    assert session.budget.value() == 0  # no budget, nothing spent
    budget = _budget(docent, loop, 2.0, 3.5)
    session.show_spending(budget)
    assert session.budget.value() == 1000
    assert session.budget.toolTip() == "175% of this month's cloud budget spent"
    budget.monthly_usd = 0.0
    session.show_spending(budget)
    assert session.budget.value() == 1000


def test_the_panel_folds_away_and_back(qtbot: QtBot) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.show()
    qtbot.waitExposed(session)
    assert session.body.isVisible()
    session.toggle.click()
    assert session.collapsed
    assert not session.body.isVisible()
    assert session.toggle.arrowType().name == "RightArrow"
    session.set_collapsed(False)
    assert session.body.isVisible()


def test_without_a_cloud_it_shows_no_money_and_no_empty_chart(
    qtbot: QtBot, docent: Docent, loop: qasync.QEventLoop
) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.show()
    session.show_spending(_budget(docent, loop, 5.0))
    assert session.toggle.text() == "No answers yet"
    assert not session.summary.isVisible()
    assert not session.chart_view.isVisible()  # no answer, no chart
    one_line = session.maximumHeight()  # nothing to unfold: the documents get the height
    assert one_line < 3 * session.toggle.sizeHint().height()
    session.add(AnswerMetrics("local", "m", "why", 0.01, 0.5, 1.5, 100, 10, 20.0, 0.0))
    session.add(AnswerMetrics("cache", "m", "why", 0.01, 0.0, 0.1, 0, 0, None, 0.0))
    assert session.toggle.text() == "2 answers · 1 cached, 1 local"
    assert session.summary.text() == "This session: 2 answers (1 cached, 1 local)"
    assert not session.summary.isVisible()  # the line above says it all: no cost to add
    assert session.chart_view.isVisible()
    assert [series.name() for series in session.chart.series()] == [
        "local: whole answer",
        "local: first word",  # hollow, drawn over the whole answer's dot
        "cached: whole answer",
        "cached: first word",
    ]
    assert session.maximumHeight() > one_line
    session.toggle.click()  # folded: one line again
    assert session.maximumHeight() == one_line
    session.toggle.click()
    assert not session.spending.isVisible()
    assert not session.budget.isVisible()
    shown = [session.toggle.text(), session.summary.text(), session.chart.title()]
    assert not any("$" in text for text in shown)

    session.show_cloud(True)  # a provider set up in Settings
    assert session.toggle.text() == "2 answers · $0.00 of $5 this month · 1 cached, 1 local"
    assert session.spending.isVisible()
    assert session.budget.isVisible()
    assert session.summary.isVisible()
    assert session.summary.text() == "This session: 2 answers (1 cached, 1 local) · cost $0.00"
