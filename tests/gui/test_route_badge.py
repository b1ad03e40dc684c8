"""The route badge: a chip in the route's colour, the reason on hover, TTFT ticking until the
first token, then the recorded numbers; copyable with Ctrl+C."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from app.answering import Failed, Finished, RouteDecided, Status, Token
from app.answering.metrics import AnswerMetrics
from tests.gui.conftest import tooltip_shows
from ui.answer.route_badge import RouteBadge
from ui.theme import route_colour

METRICS = AnswerMetrics(
    "cloud", "gw/big", "asks why: a cloud model", 0.01, 0.52, 2.4, 812, 64, 31.5, 0.0012
)


def test_the_badge_ticks_then_settles_on_the_recorded_numbers(qtbot: QtBot) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.begin()
    assert badge.ticking
    assert badge.text().startswith("routing… · TTFT 0.")
    shown = badge.numbers.text()
    qtbot.waitUntil(lambda: badge.numbers.text() != shown, timeout=2000)  # it ticks
    assert badge.numbers.text().endswith(" s…")

    badge.apply(RouteDecided("cloud", "gw/big", "asks why: a cloud model"))
    assert badge.chip.text() == "cloud"
    assert route_colour("cloud").name() in badge.chip.styleSheet()
    assert tooltip_shows(badge.chip.toolTip()) == "why: asks why: a cloud model"
    badge.apply(Status("Waiting for model..."))
    assert badge.numbers.text().endswith("· Waiting for model...")
    assert badge.text().startswith("route: cloud (gw/big) · why: asks why: a cloud model · ")

    badge.apply(Token("Tax"))
    first = badge.numbers.text()
    assert re.fullmatch(r"TTFT \d+\.\d\d s · 1 tokens", first)
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
    assert badge.numbers.text() == (
        "TTFT 0.52 s · total 2.4 s · 31.5 tok/s · 812+64 tokens · $0.0012"
    )
    assert badge.model.text() == "gw/big"


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
