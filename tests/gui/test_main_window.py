"""The window end to end: drop real files, watch them index, ask the real model, stop it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDragLeaveEvent
from PySide6.QtWidgets import QApplication, QMessageBox, QToolTip
from pytestqt.qtbot import QtBot

from app.bootstrap import Docent
from app.index import HistoryRecord
from app.llm.engine import EngineError
from app.paths import Paths
from tests.documents import write_encrypted_pdf, write_pdf
from tests.gui.conftest import drag_over, drop, main_window, tooltip_shows
from tests.peers.everything import everything_stdio
from ui.settings.settings_dialog import SettingsDialog
from ui.tools.gui_bench import measure
from ui.window.main_window import MainWindow


@pytest.fixture
def window(qapp: QApplication, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop)


def test_dropped_files_index_and_a_bad_one_shows_its_reason(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    locked = write_encrypted_pdf(tmp_path / "locked.pdf")
    window.show()
    assert drag_over(window, report, locked).isAccepted()
    assert window.drop_overlay.isVisible()  # what the drop will add, before it
    assert window.drop_overlay.label.text() == "Drop to add 2 documents to your library"
    window.dragLeaveEvent(QDragLeaveEvent())
    assert not window.drop_overlay.isVisible()
    drag_over(window, report, locked)
    drop(window, report, locked)
    assert not window.drop_overlay.isVisible()
    assert window.documents.status(report) == "Queued"
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.documents.status(report) == "Ready"
    assert window.documents.row(report).text(1) == "4"  # pages
    assert window.documents.status(locked) == "Failed — encrypted"  # the reason's head
    assert tooltip_shows(window.documents.status_tip(locked)) == (
        "encrypted: it needs a password, and Docent cannot index it"
    )
    # The failure stays in the bell once the status bar has moved on.
    window.statusBar().showMessage("something else")
    assert [notice.text for notice in window.notifications.notices] == [
        "locked.pdf failed: encrypted: it needs a password, and Docent cannot index it"
    ]
    assert window.notifications.accessibleName() == "Notifications: 1"
    assert window.library_state.text() == "Library: 1 document"  # the passages, on hover
    assert tooltip_shows(window.library_state.toolTip()).startswith("4 passages to search; ")
    assert window.model_state.text() == "Local model: qwen2.5-coder-0.5b (idle)"


def test_a_document_added_by_a_relative_path_is_one_row(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The row made as it was queued and the intake's (which names files absolutely) were two:
    "Queued" for ever beside "Failed" (found in the screenshots, which add a relative path)."""
    write_encrypted_pdf(tmp_path / "locked.pdf")
    monkeypatch.chdir(tmp_path)
    loop.run_until_complete(window.add_paths([Path("locked.pdf")]))
    assert window.documents.counts() == (1, 1)
    assert window.documents.status(tmp_path / "locked.pdf") == "Failed — encrypted"


def test_ask_streams_an_answer_with_its_badge_and_sources(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    window.question.setPlainText("How long must customer invoices be kept?")
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.question.toPlainText() == ""
    assert window.answering is not None
    with qtbot.waitSignal(window.token_shown, timeout=120_000):
        loop.run_until_complete(window.answering)
    (turn,) = window.turns.cards
    assert turn.asked.text() == "How long must customer invoices be kept?"
    assert "seven" in turn.answer.toPlainText().lower()
    cited = turn.sources.cards[0]
    assert (cited.document.text(), cited.page.text()) == (
        "[1] report.pdf",
        "p. 1 · Section 3: Retention",
    )
    # The model wrote no [n]; the sentences the citation tracker tied to a source end in chips.
    assert turn.chips(), turn.answer.toPlainText()
    link, cited_source = next(iter(turn.chips().items()))
    assert f"[{cited_source.number}]" in turn.answer.toPlainText()
    turn.answer.highlighted.emit(QUrl(link))  # the mouse over the chip
    quoted = " ".join(cited_source.used) or cited_source.text
    assert tooltip_shows(QToolTip.text()).startswith(f"{cited_source.where}\n\n{quoted}\n\n")
    turn.answer.anchorClicked.emit(QUrl(link))
    preview = window.previews[-1]
    assert (preview.path.name, preview.page) == (cited_source.document, cited_source.page)
    badge = turn.badge.text()
    assert badge.startswith("route: local (qwen2.5-coder-0.5b) · why: ")
    assert "$0.0000" in badge
    history = loop.run_until_complete(window.docent.library.history(50))
    assert f"TTFT {history[0].ttft_s:.2f} s" in badge  # the badge shows what was recorded
    assert f"{history[0].prompt_tokens}+{history[0].completion_tokens} tokens" in badge
    assert window.session.summary.text() == "This session: 1 answer (1 local)"  # no cloud: no $
    total = window.session.series[("local", "total")].points()
    assert [round(p.y(), 6) for p in total] == [round(history[0].total_s, 6)]
    assert window.send_button.accessibleName() == "Send"  # no longer Stop, and nothing to send
    assert not window.send_button.isEnabled()
    assert window.model_state.text() == "Local model: qwen2.5-coder-0.5b (ready)"

    # No cloud is set up: the card offers to set one up, never a re-ask that can only fail.
    assert turn.reask.text() == "☁ Set up a cloud model to re-ask there…"
    turn.reask.click()
    (settings,) = window.findChildren(SettingsDialog)
    assert settings.isVisible()
    assert settings.tabs.currentWidget() is settings.providers
    settings.reject()
    assert len(window.turns.cards) == 1


def test_stop_cancels_the_answer_within_a_token(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    tokens: list[None] = []

    def on_token() -> None:
        tokens.append(None)
        if len(tokens) == 2:
            assert window.send_button.accessibleName() == "Stop"
            window.send_button.click()

    window.token_shown.connect(on_token)
    loop.run_until_complete(window.ask("Summarise every section of the report in detail."))
    assert len(tokens) <= 3
    assert window.turns.cards[-1].answer.toPlainText().endswith("[stopped]")


def test_an_answer_that_cannot_start_says_why_instead_of_routing_forever(
    window: MainWindow, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_model(progress: object = None) -> None:
        raise EngineError("llama.cpp could not load the model: out of memory")

    monkeypatch.setattr(window.docent.desk, "answerer", no_model)
    loop.run_until_complete(window.ask("How long are invoices kept?"))
    reason = "llama.cpp could not load the model: out of memory"
    (turn,) = window.turns.cards
    assert turn.badge.text() == f"failed: {reason}"
    assert turn.answer.toPlainText().endswith(f"[failed: {reason}]")
    assert window.statusBar().currentMessage() == f"The answer failed: {reason}"
    assert window.send_button.accessibleName() == "Send"


def test_a_crash_of_the_local_model_costs_one_answer_and_the_next_runs_on_safe_settings(
    window: MainWindow,
    loop: qasync.QEventLoop,
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A real segmentation fault in the model's process before its first token (as llama.cpp's
    AMX repacking did on Sapphire Rapids): the card says so, the window and its documents stay,
    the question waits in the box, and the next answer comes from the restarted model on safe
    settings, which the user is told about once."""
    report = write_pdf(tmp_path / "report.pdf")
    loop.run_until_complete(window.add_paths([report]))
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", "first-token")  # every start on normal settings
    question = "How long must customer invoices be kept?"
    window.question.setPlainText(question)
    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    assert window.answering is not None
    loop.run_until_complete(window.answering)
    (failed,) = window.turns.cards
    reason = "the local model crashed (segmentation fault) while answering"
    assert failed.badge.text() == f"failed: {reason}"
    assert failed.answer.toPlainText().endswith(f"[failed: {reason}]")
    assert window.question.toPlainText() == question  # kept: Enter asks again
    assert window.documents.status(report) == "Ready"
    assert window.model_notice is not None
    notice = window.model_notice.text()
    assert "crashed (segmentation fault) before its first token on this computer" in notice
    assert "safe settings (weight repacking off)" in notice
    window.model_notice.close()

    qtbot.keyClick(window.question, Qt.Key.Key_Return)
    loop.run_until_complete(window.answering)
    (answered,) = window.turns.cards  # asked again: another version of the failed answer
    assert answered is failed
    assert answered.version_label.text() == "Answer 2 of 2"
    assert "seven" in answered.answer.toPlainText().lower()
    assert answered.badge.text().startswith("route: local (qwen2.5-coder-0.5b) · why: ")
    assert window.model_state.text() == "Local model: qwen2.5-coder-0.5b (ready, safe settings)"
    assert window.model_notice.isHidden()  # told once


def test_shift_enter_makes_a_new_line_instead_of_sending(window: MainWindow, qtbot: QtBot) -> None:
    window.question.setPlainText("first line")
    qtbot.keyClick(window.question, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.answering is None
    assert "\n" in window.question.toPlainText()


def test_clicking_a_citation_shows_its_page_with_the_passage_highlighted(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    loop.run_until_complete(window.add_paths([write_pdf(tmp_path / "report.pdf")]))
    loop.run_until_complete(window.ask("How long must customer invoices be kept?"))
    (turn,) = window.turns.cards
    qtbot.mouseClick(turn.sources.cards[0], Qt.MouseButton.LeftButton)
    (preview,) = window.previews
    assert preview.loading is not None
    loop.run_until_complete(preview.loading)
    assert preview.rendered is not None, preview.position.text()
    assert (preview.rendered.page, preview.rendered.label) == (2, "1")
    assert preview.rendered.highlights
    assert preview.position.text().startswith("p. 1 (page 2 of 4)")
    assert not preview.image.pixmap().isNull()
    preview.go(3)
    loop.run_until_complete(preview.loading)
    assert preview.rendered.page == 3
    assert not preview.rendered.highlights  # the passage is on the cited page only


def test_ticked_documents_scope_the_question_and_are_remembered(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    fleet = write_pdf(tmp_path / "fleet.pdf", [("Fleet", "The vans are serviced yearly.")])
    loop.run_until_complete(window.add_paths([report, fleet]))
    window.documents.tick([str(fleet)])
    (fleet_id,) = window.documents.scope() or []
    loop.run_until_complete(window.ask("How long must customer invoices be kept?"))
    history = loop.run_until_complete(window.docent.library.history(50))
    assert history[0].scope == [fleet_id]
    assert "report.pdf" not in json.dumps(history[0].citations)

    window.save_state()
    again = MainWindow(window.docent)
    qtbot.addWidget(again)
    loop.run_until_complete(again.start())
    loop.run_until_complete(again.shutdown())
    assert again.documents.ticked_paths() == [str(fleet)]
    assert again.documents.scope() == [fleet_id]


def test_context_menu_actions_remove_and_reindex(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    fleet = write_pdf(tmp_path / "fleet.pdf", [("Fleet", "The vans are serviced yearly.")])
    loop.run_until_complete(window.add_paths([report, fleet]))
    window.documents.reindex_requested.emit([str(report)])
    assert window.indexing is not None
    loop.run_until_complete(window.indexing)
    assert window.documents.status(report) == "Ready"
    window.documents.remove_requested.emit([str(fleet)])
    loop.run_until_complete(window.wait_for_tasks())
    names = [d.name for d in loop.run_until_complete(window.docent.library.documents())]
    assert names == ["report.pdf"]
    assert window.documents.topLevelItemCount() == 1


def test_removing_a_document_offers_to_delete_the_answers_that_quote_it(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    """Its passages live on in the answers that cited them: the window says how many and
    deletes them when asked (answers quoting other documents stay)."""
    report = write_pdf(tmp_path / "report.pdf")
    fleet = write_pdf(tmp_path / "fleet.pdf", [("Fleet", "The vans are serviced yearly.")])
    loop.run_until_complete(window.add_paths([report, fleet]))
    ids = {d.name: d.id for d in loop.run_until_complete(window.docent.library.documents())}

    def answer(document: str) -> HistoryRecord:
        cited = [{"number": 1, "document_id": ids[document], "document": document, "page": 1}]
        return HistoryRecord(
            question=f"about {document}?", scope=[], answer="…", status="finished", error=None,
            route="local", model="m", reason="why", citations=cited, retrieval_s=0.0,
            ttft_s=0.1, total_s=0.2, prompt_tokens=1, completion_tokens=1, tokens_per_s=None,
            cost_usd=0.0, grounded=1.0,
        )  # fmt: skip

    for document in ("fleet.pdf", "fleet.pdf", "report.pdf"):
        loop.run_until_complete(window.docent.library.record(answer(document)))
    window.documents.remove_requested.emit([str(fleet)])
    loop.run_until_complete(window.wait_for_tasks())
    offer = window.forget_offer
    assert offer is not None
    assert offer.text().startswith("2 answers in your conversations and history quote the removed")
    offer.button(QMessageBox.StandardButton.Yes).click()
    loop.run_until_complete(window.wait_for_tasks())
    left = loop.run_until_complete(window.docent.library.history(10))
    assert [entry.question for entry in left] == ["about report.pdf?"]


def test_the_first_run_indexes_the_welcome_guide_once(
    window: MainWindow, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    async def first_start() -> None:
        # One coroutine: qasync drops callbacks still pending when run_until_complete returns,
        # so a task spawned by start() must be awaited within the same run.
        await window.start()
        assert window.indexing is not None
        await window.indexing

    loop.run_until_complete(first_start())
    (document,) = loop.run_until_complete(window.docent.library.documents())
    assert document.name == "welcome-to-docent.md"
    second = MainWindow(window.docent)
    qtbot.addWidget(second)
    loop.run_until_complete(second.start())
    assert second.indexing is None
    loop.run_until_complete(second.shutdown())


def test_the_stall_meter_reports_ticks_while_indexing_and_answering(
    window: MainWindow, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    loop.run_until_complete(window.add_paths([report]))
    result = loop.run_until_complete(measure(window, report, "How long are invoices kept?"))
    assert result.ticks > 10
    assert result.tokens > 0
    assert result.pages == 4
    assert 0 <= result.p99_lateness_ms <= result.longest_stall_ms


def test_the_status_bar_shows_cloud_health_live(
    qapp: QApplication, loop: qasync.QEventLoop, qtbot: QtBot, isolated_paths: Paths
) -> None:
    """A real stdio MCP server under qasync, and one that cannot start."""
    broken = {"name": "team", "command": "/nowhere/mcp-server", "models": ["big"]}
    working = everything_stdio().model_dump()
    settings = {"cloud": {"servers": [working, broken]}}
    isolated_paths.settings_file.write_text(json.dumps(settings))
    docent = Docent.from_environment(embeddings=False)
    loop.run_until_complete(docent.open())
    window = MainWindow(docent)
    assert window.cloud_state.text() == "Cloud: not set up"

    async def start_and_settle() -> None:
        # Within the loop: the sessions are asyncio tasks (anyio needs a running loop).
        await window.start()
        assert docent.cloud is not None
        await docent.cloud.settled()

    loop.run_until_complete(start_and_settle())
    assert window.cloud_state.text() == "Cloud: 1/2 ready"
    ready, failed = tooltip_shows(window.cloud_state.toolTip()).split("\n")
    assert re.fullmatch(r"everything: ready \(\d+ tools\)", ready)
    assert failed == "team: failed (cannot start '/nowhere/mcp-server': No such file or directory)"
    loop.run_until_complete(window.shutdown())
    loop.run_until_complete(docent.close())
    window.deleteLater()


def test_benchmark_window_measures_the_local_model_with_progress_and_plots(
    window: MainWindow, loop: qasync.QEventLoop
) -> None:
    bench = window.open_benchmark()
    assert bench.quick.isChecked()
    done: list[int] = []
    bench.progress.valueChanged.connect(done.append)
    outcomes: list[bool] = []
    bench.finished_run.connect(outcomes.append)
    loop.run_until_complete(bench.start())
    assert outcomes == [True]
    # Quick plan, local route only: a warm-up, 1 + 2 concurrent requests, 2 prompt lengths.
    assert [value for value in done if value] == sorted(value for value in done if value)
    assert max(done) == 6
    assert bench.step.text() == "Done."
    assert bench.results is not None
    assert [route["route"] for route in bench.results["routes"]] == ["local"]
    assert "|prompt tokens|TTFT (median)|" in bench.tables.toMarkdown()  # a table, as Qt writes it
    tabs = [bench.plots.tabText(i) for i in range(bench.plots.count())]
    assert tabs == ["Tables", "TTFT by length", "TTFT by concurrency", "throughput by concurrency"]


def test_stopping_a_benchmark_ends_it_and_frees_the_model(
    window: MainWindow, loop: qasync.QEventLoop
) -> None:
    bench = window.open_benchmark()
    started = loop.create_future()
    bench.progress.valueChanged.connect(
        lambda value: value >= 1 and not started.done() and started.set_result(value)
    )

    async def stop_mid_run() -> asyncio.Task[None]:
        running = bench.start()
        await started  # the warm-up request is done: mid-run
        bench.stop()
        await asyncio.gather(running, return_exceptions=True)
        return running

    assert loop.run_until_complete(stop_mid_run()).cancelled()
    assert bench.step.text() == "Stopped."
    assert bench.run_button.isEnabled()
    assert not bench.stop_button.isEnabled()
