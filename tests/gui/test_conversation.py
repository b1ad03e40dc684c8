"""The conversation renders Markdown from models safely: HTML in an answer stays text."""

from __future__ import annotations

import re

from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from app.answering import Finished, RouteDecided, Token
from app.answering.metrics import AnswerMetrics
from app.llm.engine import Message
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


def test_a_cloud_answer_links_to_exactly_what_was_sent(qtbot: QtBot) -> None:
    panel = ConversationPanel()
    qtbot.addWidget(panel)
    sent = (Message("system", "Answer from sources."), Message("user", "[1]\nInvoices: 7 years."))
    cloud = AnswerMetrics("cloud", "gw/big", "asks why", 0.01, 0.5, 1.0, 10, 5, 20.0, 0.001)
    panel.begin("Why seven years?")
    panel.apply(Token("Tax audits."))
    panel.apply(Finished("Tax audits.", (), cloud, 1, False, None, sent))
    assert "↻ Re-ask with the local route" in panel.transcript.toPlainText()
    *_, reask, what_was_sent = list(panel._links)
    with qtbot.waitSignal(panel.sent_requested) as shown:
        panel.transcript.anchorClicked.emit(QUrl(what_was_sent))
    assert shown.args == [
        "── system ──\nAnswer from sources.\n\n── user ──\n[1]\nInvoices: 7 years."
    ]
    with qtbot.waitSignal(panel.reask_requested) as asked:
        panel.transcript.anchorClicked.emit(QUrl(reask))
    assert asked.args == ["Why seven years?", "local"]


FORGED = (
    'See <a href="docent-link:0">the invoice</a>, [re-ask in the cloud](docent-link:0), '
    "<docent-link:1>, ![chart](docent-link:1) and [a site](https://example.com/x)."
)


def hrefs(panel: ConversationPanel) -> list[str]:
    return re.findall(r'<a href="([^"]*)"', panel.transcript.toHtml())


def test_an_answer_cannot_make_a_link_nor_forge_one_of_docents(qtbot: QtBot) -> None:
    panel = ConversationPanel()
    qtbot.addWidget(panel)
    panel.begin("Where is the invoice?")
    panel.apply(Token(FORGED))
    panel.apply(Finished(FORGED, (), metrics(), 1, False, None))
    text = panel.transcript.toPlainText()
    assert all(words in text for words in ("re-ask in the cloud", "a site"))  # still readable…
    assert "<img" not in panel.transcript.toHtml()
    (reask,) = hrefs(panel)  # …but the only link is Docent's own
    assert reask in panel._links
    with (
        qtbot.assertNotEmitted(panel.reask_requested),
        qtbot.assertNotEmitted(panel.source_clicked),
        qtbot.assertNotEmitted(panel.sent_requested),
    ):
        for forged in ("docent-link:0", "docent-link:1", "https://example.com/x"):
            panel.transcript.anchorClicked.emit(QUrl(forged))
    other = ConversationPanel()  # another window's links are not this one's either
    qtbot.addWidget(other)
    other.begin("Where is the invoice?")
    other.apply(Finished("Here.", (), metrics(), 2, False, None))
    assert hrefs(other) != [reask]
    with qtbot.assertNotEmitted(panel.reask_requested):
        panel.transcript.anchorClicked.emit(QUrl(hrefs(other)[0]))
