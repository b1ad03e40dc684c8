"""The route badge: a chip in the route's colour, where it ran and why in plain words without
hovering, the first token's wait ticking, then the recorded numbers and the cost in words; the
details from the keyboard; copyable with Ctrl+C as the CLI's footer."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QPushButton
from pytestqt.qtbot import QtBot

from app.answering import Failed, Finished, InConversation, RouteDecided, Status, Token
from app.answering.metrics import AnswerMetrics
from app.llm.engine import Message
from app.routing import Reason
from tests.gui.test_theme import contrast
from ui.answer.route_badge import RouteBadge
from ui.theme import dark_palette, muted_colour, route_colour, warning_colour

METRICS = AnswerMetrics(
    "cloud", "gw/big", "asks why: a cloud model", 0.01, 0.52, 2.4, 812, 64, 31.5, 0.0012
)


def test_the_badge_ticks_then_settles_on_the_recorded_numbers(qtbot: QtBot) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.begin()
    assert badge.ticking
    assert badge.text().startswith("routing… · first token 0.")
    shown = badge.numbers.text()
    qtbot.waitUntil(lambda: badge.numbers.text() != shown, timeout=2000)  # it ticks
    assert badge.numbers.text().endswith(" s…")

    badge.apply(RouteDecided("cloud", "gw/big", "asks why: a cloud model"))
    assert badge.chip.text() == "cloud"
    assert route_colour("cloud").name() in badge.chip.styleSheet()
    assert badge.reason.full_text() == "gw/big · asks why: a cloud model"  # no hover needed
    badge.apply(Status("Waiting for model..."))  # the card's waiting line shows it
    assert badge.text().startswith(
        "route: cloud (gw/big) · why: asks why: a cloud model · Waiting for model... · "
    )

    badge.apply(Token("Tax"))
    first = badge.numbers.text()
    assert re.fullmatch(r"first token \d+\.\d\d s · 1 tokens", first)
    for piece in (" audits", " and", " appeals"):
        badge.apply(Token(piece))
    with qtbot.waitSignal(badge.ticker.timeout):  # the next tick: the count and rate, live
        pass
    ttft = first.partition(" · ")[0]
    assert re.fullmatch(rf"{ttft} · 4 tokens · \d+\.\d tok/s…", badge.numbers.text())

    badge.apply(Finished("Tax audits.", (), METRICS, 1, False, None))
    assert not badge.ticking
    assert badge.text() == METRICS.footer()
    assert badge.accessibleDescription() == METRICS.footer()  # what a screen reader reads out
    assert badge.numbers.text() == "first token 0.5 s · 2.4 s · 32 tok/s ·"
    assert badge.cost.text() == "$0.0012"


def test_the_badge_copies_its_line_and_shows_a_failure(qtbot: QtBot) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.begin()
    badge.settle(METRICS)
    badge.show()
    badge.setFocus()
    qtbot.keyClick(badge, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == METRICS.footer()

    badge.begin()
    badge.apply(Failed("the cloud answered 401: check the key", None))
    assert not badge.ticking
    assert not badge.chip.isVisible()
    assert badge.text() == "failed: the cloud answered 401: check the key"
    assert badge.accessibleDescription() == badge.text()
    assert "color:" in badge.numbers.styleSheet()


@pytest.mark.parametrize(
    ("route", "why", "cost", "shown", "cost_shown"),
    [
        ("local", Reason("no_cloud"), 0.0, "on this computer · no cloud set up", "free"),
        (
            "local",
            Reason("simple", parts=(Reason("strong_evidence"),)),
            0.0,
            "on this computer · simple question · strong evidence",
            "free",
        ),
        (
            "cache",
            Reason("cached", {"age_s": 120.4, "ttl_s": 300}),
            0.0,
            "an earlier answer, again · asked 120 s ago · kept for 300 s",
            "free",
        ),
        (
            "cloud",
            Reason("hard", parts=(Reason("parts", {"count": 2}), Reason("explanation"))),
            0.0021,
            "gw/big · 2-part question · asks why",
            "$0.0021",
        ),
        ("cloud", Reason("mode_cloud"), None, "gw/big · route set to Cloud only", "cost unknown"),
        (
            "fallback",
            Reason("cloud_failed", {"error": "timeout"}),
            0.0,
            "gw/big · the cloud failed before its first word (timeout): the local model answered",
            "free",  # written here, as a fallback is
        ),
    ],
)
def test_the_badge_says_where_and_why_in_words_and_what_it_cost(
    qtbot: QtBot, route: str, why: Reason, cost: float | None, shown: str, cost_shown: str
) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.show()
    badge.begin()
    badge.apply(RouteDecided(route, "gw/big", why.text, why))
    metrics = AnswerMetrics(route, "gw/big", why.text, 0.01, 5.3, 7.0, 812, 64, 30.2, cost)
    badge.settle(metrics)
    assert badge.reason.isVisible()
    assert badge.reason.full_text() == shown
    assert badge.numbers.text() == "first token 5.3 s · 7.0 s · 30 tok/s ·"
    assert badge.cost.text() == cost_shown
    unknown = warning_colour(badge.palette()).name()
    assert (unknown in badge.cost.styleSheet()) == (cost is None)  # a warning, in colour
    assert badge.text() == metrics.footer()  # the copied line stays the CLI's footer


# The offscreen platform has no keyboard to grab: a popup asks for it anyway.
@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
def test_the_details_open_from_the_keyboard_with_every_number(qtbot: QtBot) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.show()
    badge.begin()
    badge.apply(InConversation(3, "How long are invoices kept in the cloud archive?", 0))
    sent = (Message("user", "How long?"),)
    badge.apply(Finished("Tax audits.", (), METRICS, 1, False, None, sent))
    badge.spending = "$0.0112 of $5.00 this month"
    badge.setFocus()
    qtbot.keyClick(badge, Qt.Key.Key_Return)
    details = badge.details
    assert details is not None
    assert details.isVisible()
    assert details.values() == {
        "Route": "cloud — gw/big",
        "Model": "gw/big",
        "Why": "asks why: a cloud model",
        "Searched for": "How long are invoices kept in the cloud archive?",
        "First token": "0.52 s",
        "Total": "2.40 s",
        "Speed": "31.5 tok/s",
        "Tokens": "812 in · 64 out",
        "Cost": "$0.0012",
        "This month": "$0.0112 of $5.00 this month",
    }
    assert details.sent is not None
    with qtbot.waitSignal(badge.sent_requested):
        details.sent.click()
    assert not details.isVisible()  # it closed itself

    qtbot.keyClick(badge, Qt.Key.Key_Space)  # Space opens it too; Esc closes it
    assert badge.details is not details
    assert badge.details.isVisible()
    qtbot.keyClick(badge.details, Qt.Key.Key_Escape)
    assert not badge.details.isVisible()


def test_the_badges_quiet_and_warning_words_keep_their_contrast(qapp: QApplication) -> None:
    for palette in (qapp.palette(), dark_palette()):
        for ground in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
            for colour in (muted_colour(palette), warning_colour(palette)):
                assert contrast(colour, palette.color(ground)) >= 4.5, (colour.name(), ground)


@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")
def test_the_details_leave_out_a_search_that_was_the_question_itself(qtbot: QtBot) -> None:
    badge = RouteBadge("How long are invoices kept?")
    qtbot.addWidget(badge)
    badge.show()
    badge.begin()
    badge.apply(InConversation(1, "How long are invoices kept?", 0))  # a first question
    badge.settle(METRICS)
    qtbot.mouseClick(badge, Qt.MouseButton.LeftButton)  # a click opens them too
    assert badge.details is not None
    assert "Searched for" not in badge.details.values()
    assert "What was sent" not in [b.text() for b in badge.details.findChildren(QPushButton)]
    badge.details.close()


def test_a_question_that_looked_hard_with_no_cloud_suggests_setting_one_up(
    qtbot: QtBot,
) -> None:
    """No cloud, and the router read the question as hard: the badge says why under its line,
    with a link to where a cloud model is set up; any other local answer has no such line."""
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.show()
    badge.begin()
    hard = Reason("no_cloud_hard", parts=(Reason("parts", {"count": 2}), Reason("explanation")))
    badge.apply(RouteDecided("local", "qwen", hard.text, hard))
    metrics = AnswerMetrics("local", "qwen", hard.text, 0.01, 5.3, 7.0, 812, 64, 30.2, 0.0)
    badge.settle(metrics)
    assert badge.reason.full_text() == "on this computer · no cloud set up"
    assert badge.nudge.isVisible()
    assert f"{badge.hard.full_text()} {badge.set_up.text()}" == (
        "looked hard: 2-part question · asks why · "
        "Set up a cloud model to send questions like this there"
    )
    with qtbot.waitSignal(badge.cloud_setup_requested):
        qtbot.mouseClick(badge.set_up, Qt.MouseButton.LeftButton)
    assert badge.text() == metrics.footer()  # what Copy copies: the CLI's footer, as before

    badge.begin()  # the next answer: a simple question
    assert not badge.nudge.isVisible()
    simple = Reason("no_cloud")
    badge.apply(RouteDecided("local", "qwen", simple.text, simple))
    assert not badge.nudge.isVisible()
    badge.begin()
    badge.apply(RouteDecided("local", "qwen", hard.text, hard))
    badge.apply(Failed("the local model crashed", None))
    assert not badge.nudge.isVisible()
