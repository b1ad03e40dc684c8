"""The window with the local route on a model server the user runs (llama.cpp's server on
127.0.0.1): no word says an answer stays on this computer when it goes to the server, the status
bar names the server's model and host and whether it answered, and a summary written while the
server is down says, as an answer does, that the model on this computer wrote it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.paths import Paths
from tests.documents import write_pdf
from tests.gui.conftest import main_window, tooltip_shows
from ui.settings.settings_dialog import SettingsDialog
from ui.window.main_window import MainWindow

QUESTION = "How long must customer invoices be kept?"
DOWN = "http://127.0.0.1:9/v1"  # nothing listens on port 9


def on_server(paths: Paths, base_url: str, **more: Any) -> None:
    server = {"enabled": True, "base_url": base_url, "model": "qwen-mini"}
    paths.settings_file.write_text(json.dumps({"local": {"server": server}, **more}))


@pytest.fixture
def window(
    qapp: QApplication, loop: qasync.QEventLoop, isolated_paths: Paths, llama_server: str
) -> Iterator[MainWindow]:
    """Privacy "never": the words that used to claim nothing leaves this computer show."""
    on_server(isolated_paths, llama_server, routing={"privacy": "never"})
    yield from main_window(loop, embeddings=False)


@pytest.fixture
def stopped(
    qapp: QApplication, loop: qasync.QEventLoop, isolated_paths: Paths
) -> Iterator[MainWindow]:
    on_server(isolated_paths, DOWN)
    yield from main_window(loop, embeddings=False)


def test_the_words_say_the_question_goes_to_the_server_and_the_status_bar_that_it_answered(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    assert window.model_state.text() == "Model server: qwen-mini on 127.0.0.1 (not asked yet)"
    header = window.header
    header.menu.aboutToShow.emit()
    assert header.actions_by_mode["local"].text() == "Your model server only"
    assert header.actions_by_mode["auto"].text() == (
        "Auto: Docent decides (on your model server for now)"
    )

    dialog = SettingsDialog(window.docent)  # "Try a question" writes nothing, sends nothing
    loop.run_until_complete(dialog.loading)
    page = dialog.routing
    page.question.setText(QUESTION)
    page.try_button.click()
    assert page.trying is not None
    loop.run_until_complete(page.trying)
    assert page.route.text().startswith(
        "On your model server, with qwen-mini on 127.0.0.1.\n"
        "Why: privacy: kept on your model server (no cloud).\n"
    )
    page.modes["local"].click()
    page.try_button.click()
    assert page.trying is not None
    loop.run_until_complete(page.trying)
    assert "Why: route set to Your model server only." in page.route.text()
    dialog.deleteLater()

    loop.run_until_complete(window.ask(QUESTION))
    (turn,) = window.turns.cards
    assert turn.badge.reason.full_text() == (
        "qwen-mini on 127.0.0.1 · privacy: kept on your model server (no cloud)"
    )
    assert "7" in turn.answer.toPlainText() or "seven" in turn.answer.toPlainText().lower()
    assert window.model_state.text() == "Model server: qwen-mini on 127.0.0.1 (reachable)"
    assert not window.docent.chat.loaded  # the server answered
    assert tooltip_shows(window.model_state.toolTip()) == (
        "When it cannot answer, qwen2.5-coder-0.5b on this computer does (idle)."
    )


def test_a_server_that_is_down_shows_in_the_status_bar_and_a_summary_falls_back(
    stopped: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    window = stopped
    report = write_pdf(
        tmp_path / "retention.pdf",
        [("Retention", "Customer invoices are kept for seven years after the year ends.")],
    )
    loop.run_until_complete(window.add_paths([report]))
    loop.run_until_complete(window.ask(QUESTION))
    (turn,) = window.turns.cards
    unreachable = f"cannot reach 127.0.0.1 at {DOWN}"
    assert turn.badge.reason.full_text() == (
        f"qwen2.5-coder-0.5b · the model server failed before its first word ({unreachable}): "
        "answered on this computer"
    )
    assert window.model_state.text() == "Model server: qwen-mini on 127.0.0.1 (unreachable)"
    assert tooltip_shows(window.model_state.toolTip()) == (
        f"Last request: {unreachable}\n"
        "When it cannot answer, qwen2.5-coder-0.5b on this computer does (ready)."
    )

    (document,) = loop.run_until_complete(window.docent.library.match_documents([str(report)]))
    window.documents.summarize_requested.emit(document.id)
    dialog = window.summaries[-1]
    loop.run_until_complete(dialog.preparing)
    dialog.start_button.click()
    assert dialog.summarizing is not None
    loop.run_until_complete(dialog.summarizing)
    assert dialog.step_label.text() == "Done."
    (summary,) = dialog.turns.cards
    assert summary.badge.reason.full_text() == (
        f"qwen2.5-coder-0.5b · the model server failed before its first word ({unreachable}): "
        "answered on this computer"
    )
    assert summary.badge.text().startswith("route: fallback (qwen2.5-coder-0.5b)")
    assert "seven" in summary.answer.toPlainText().lower()


def test_the_routing_settings_say_where_the_local_route_answers(
    stopped: MainWindow, loop: qasync.QEventLoop
) -> None:
    dialog = SettingsDialog(stopped.docent)
    loop.run_until_complete(dialog.loading)
    page = dialog.routing
    assert page.modes["local"].text() == "Your model server only"
    assert page.privacies["never"].text() == "Nothing goes to a cloud"
    choices = [*page.modes.values(), *page.privacies.values()]
    words = [f"{b.text()} {b.accessibleDescription()}" for b in choices]
    assert not [text for text in words if "this computer" in text.lower()]
    dialog.deleteLater()
