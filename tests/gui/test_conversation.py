"""The conversation renders Markdown from models safely: HTML in an answer stays text."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.answering import Finished, RouteDecided, Token
from app.metrics import AnswerMetrics
from ui.conversation import ConversationPanel

HOSTILE = (
    "**Seven** years.\n\n- invoices\n- ledgers\n\n<img src='http://127.0.0.1:9/x.png'> <b>raw</b>"
)


def metrics() -> AnswerMetrics:
    return AnswerMetrics("local", "m", "why", 0.01, 0.5, 1.0, 10, 5, 20.0, 0.0)


def test_markdown_is_rendered_and_html_is_shown_as_text(qtbot: QtBot) -> None:
    panel = ConversationPanel()
    qtbot.addWidget(panel)
    panel.begin("How long?")
    panel.apply(RouteDecided("local", "m", "why"))
    for piece in HOSTILE.split(" "):
        panel.apply(Token(piece + " "))
    panel.apply(Finished(HOSTILE, (), metrics(), 1, False, None))
    text = panel.transcript.toPlainText()
    html = panel.transcript.toHtml()
    assert "**" not in text  # rendered as bold, not shown as asterisks
    assert "font-weight:700" in html
    assert "<img" in text  # the tag is visible text…
    assert "<img src" not in html  # …and was never markup
    assert "&lt;b&gt;raw&lt;/b&gt;" in html
    assert text.index("Q: How long?") < text.index("Seven years.")
    assert panel.badge.text() == metrics().footer()
