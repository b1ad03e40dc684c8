"""Untrusted text (file names, errors, reasons, model names, benchmark reports) shows literally:
labels are plain text, tooltips and charts escape it, Markdown from elsewhere makes no links,
loads no images."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCharts import QChartView
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from app.answering import Failed, RouteDecided
from app.bootstrap import Docent
from app.intake import FileFailed
from tests.gui.conftest import tooltip_shows
from ui.answer.page_preview import PagePreview
from ui.answer.route_badge import RouteBadge
from ui.bench.plots import line_chart
from ui.bench.window import BenchmarkWindow
from ui.library.documents_panel import STATUS, DocumentsPanel
from ui.plain import plain_tooltip
from ui.settings.mcp_serving import McpServing
from ui.settings.model_manager import ModelManager
from ui.settings.settings_dialog import SettingsDialog
from ui.window.main_window import MainWindow

HOSTILE = "<img src=x><b>bold</b>"
HOSTILE_NAME = "<img src=x><b>bold<i>"  # a file name holds no "/"


def shows_literally(label: QLabel, text: str) -> bool:
    return label.textFormat() == Qt.TextFormat.PlainText and text in label.text()


def test_a_tooltip_shows_its_text_literally(qapp: QApplication) -> None:
    text = f"cannot serve on 127.0.0.1: {HOSTILE} & 'more'\nsecond line"
    assert tooltip_shows(plain_tooltip(text)) == text
    assert plain_tooltip("") == ""  # no tooltip at all


def test_the_badge_shows_reasons_and_cloud_errors_as_text(qtbot: QtBot) -> None:
    badge = RouteBadge()
    qtbot.addWidget(badge)
    badge.begin()
    badge.apply(RouteDecided("cloud", f"gw/{HOSTILE_NAME}", f"because {HOSTILE}"))
    shown = f"gw/{HOSTILE_NAME} · because {HOSTILE}"  # cut to fit, whole on hover
    assert badge.reason.textFormat() == Qt.TextFormat.PlainText
    assert badge.reason.full_text() == shown
    assert tooltip_shows(badge.reason.toolTip()) == shown
    badge.apply(Failed(f"gw: 500 {HOSTILE}", None))
    assert shows_literally(badge.numbers, f"failed: gw: 500 {HOSTILE}")


def test_a_file_name_in_an_error_is_text_in_the_model_manager_and_settings(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    model = f"/nowhere/{HOSTILE_NAME}.gguf"
    manager = ModelManager(docent)
    task = manager.use(model)
    assert task is not None
    loop.run_until_complete(task)
    assert shows_literally(manager.status, f"Cannot use {model}: ")
    assert tooltip_shows(manager.rows["qwen2.5-coder-0.5b"].toolTip(0)).startswith(
        "qwen2.5-coder-0.5b — "
    )
    manager.deleteLater()

    dialog = SettingsDialog(docent)
    loop.run_until_complete(dialog.loading)
    dialog.model.setText(model)
    assert loop.run_until_complete(dialog.submit()) is False
    assert shows_literally(dialog.errors["local.chat_model"], model)
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in dialog.errors.values())
    assert dialog.keychain.textFormat() == Qt.TextFormat.PlainText
    for entries in (dialog.providers, dialog.servers):
        entries.show_error(-1, HOSTILE)
        assert shows_literally(entries.error, HOSTILE)
        assert entries.test_result.textFormat() == Qt.TextFormat.PlainText
    dialog.deleteLater()


def test_a_page_that_cannot_be_shown_names_its_file_as_text(
    docent: Docent, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    path = tmp_path / f"{HOSTILE_NAME}.pdf"
    path.write_bytes(b"%PDF-1.7 not really")
    preview = PagePreview(docent, path, 1)
    qtbot.addWidget(preview)
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    assert shows_literally(preview.position, f"{HOSTILE_NAME}.pdf' as type pdf")  # MuPDF's words
    loop.run_until_complete(preview.close_async())


def test_the_mcp_servers_failure_is_a_plain_tooltip(docent: Docent) -> None:
    serving = McpServing(docent)
    serving.error = f"cannot serve on 127.0.0.1:8765: {HOSTILE}"
    serving._show()
    assert tooltip_shows(serving.label.toolTip()) == serving.error
    serving.label.deleteLater()


def bench_results(model: str, error: str) -> dict[str, Any]:
    row = {"prompt_tokens": 64, "ttft_median_s": 0.5, "prefill_tok_s": 90.0}
    concurrency = {"requests": 1, "ttft_median_s": 0.5, "ttft_s": [0.5], "aggregate_tok_s": 9.0}
    return {
        "routes": [
            {
                "route": "cloud",
                "model": model,
                "errors": [error],
                "lengths": [row | {"decode_tok_s": 9.0}],
                "concurrency": [
                    concurrency | {"per_request_decode_tok_s": 9.0, "aggregate_vs_one": 1.0}
                ],
            }
        ]
    }


def test_the_benchmark_report_and_its_charts_show_names_and_errors_as_text(
    docent: Docent, qtbot: QtBot, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.png"
    error = f"{HOSTILE} ![chart]({secret.as_uri()}) [retry](docent-link:0) https://example.com"
    window = BenchmarkWindow(docent)
    qtbot.addWidget(window)
    window._show(bench_results(f"gw/{HOSTILE}", error))
    text, html = window.tables.toPlainText(), window.tables.toHtml()
    assert f"cloud: gw/{HOSTILE}" in text
    assert all(words in text for words in (HOSTILE, "chart", "retry", "https://example.com"))
    assert not re.search(r"<img|<a ", html)  # neither a picture nor a link…
    assert "<table" in html  # …but still a table

    def picture(name: str) -> Any:
        chart = line_chart("t", "x", "y", [(name, "cloud", [(1, 1.0), (2, 2.0)])])
        view = QChartView(chart)
        qtbot.addWidget(view)
        view.resize(400, 300)
        return view.grab().toImage()

    # A legend rendered as HTML would draw "<i></i>x" exactly as "x".
    assert picture("<i></i>x") != picture("x")

    window._report(f"measuring gw/{HOSTILE}", 1, 2)
    assert shows_literally(window.step, f"measuring gw/{HOSTILE}")


def test_the_documents_panel_shows_names_and_reasons_as_text(qtbot: QtBot) -> None:
    panel = DocumentsPanel()
    qtbot.addWidget(panel)
    path = Path("/docs") / f"{HOSTILE_NAME}.pdf"
    panel.apply(FileFailed(path, f"damaged: {HOSTILE}"))
    row = panel.row(path)
    assert tooltip_shows(row.toolTip(0)) == str(path)
    assert tooltip_shows(row.toolTip(STATUS)) == f"damaged: {HOSTILE}"


def test_the_windows_model_notice_and_status_bar_show_text(
    docent: Docent, loop: qasync.QEventLoop
) -> None:
    window = MainWindow(docent)
    try:
        window._tell_model_notice(f"The local model {HOSTILE_NAME}.gguf cannot be used")
        assert window.model_notice is not None
        assert window.model_notice.textFormat() == Qt.TextFormat.PlainText
        assert tooltip_shows(window.model_state.toolTip()).endswith("cannot be used")
        assert HOSTILE_NAME in tooltip_shows(window.model_state.toolTip())
        assert all(
            label.textFormat() == Qt.TextFormat.PlainText
            for label in (window.model_state, window.library_state)
        )  # the cloud's state is a button: a button's text is never rich text
    finally:
        loop.run_until_complete(window.shutdown())
        window.deleteLater()
