"""The session panel's totals: an answer of unknown cost is counted as such, never as free."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.answering.metrics import AnswerMetrics
from ui.session_panel import SessionPanel


def test_answers_of_unknown_cost_are_counted_apart(qtbot: QtBot) -> None:
    session = SessionPanel()
    qtbot.addWidget(session)
    session.add(AnswerMetrics("cloud", "gw/priced", "why", 0.01, 0.5, 1.0, 1000, 10, 20.0, 0.25))
    session.add(AnswerMetrics("cloud", "gw/unpriced", "why", 0.01, 0.5, 1.0, 1000, 10, 20.0, None))
    session.show_spending("$0.2500 of $5.00 this month + 1 answer of unknown cost")
    assert session.summary.text() == (
        "Session: 2 answers (cloud 2) · cost $0.2500 + 1 of unknown cost"
    )
    assert session.spending.text() == (
        "Budget: $0.2500 of $5.00 this month + 1 answer of unknown cost"
    )
    assert (
        AnswerMetrics("cloud", "m", "r", 0, 0.5, 1, 1, 1, None, None)
        .footer()
        .endswith("1+1 tokens · cost unknown")
    )
