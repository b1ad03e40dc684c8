"""The Chinese interface: the catalogue covers every string the window words, the compiled
catalogue is the committed source's, and the real window speaks Chinese with it."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.bootstrap import Docent
from app.index import HistoryRecord
from app.intake import FileIndexed, IndexingProgress
from app.routing import Reason
from app.settings import Settings
from tests.gui.conftest import main_window
from tests.unit.test_routing import REASONS
from ui.i18n import ENVIRONMENT, chosen_language, install_translators
from ui.library.documents_panel import DocumentsPanel
from ui.library.indexing_bar import IndexingBar
from ui.library.watched_folders import WatchedFoldersPage
from ui.route_words import reason_words
from ui.settings.settings_dialog import SettingsDialog
from ui.window.main_window import MainWindow

UI = Path(__file__).parents[2] / "ui"
CATALOGUE = Path(str(resources.files("resources").joinpath("i18n", "docent_zh_CN.ts")))
HAN = re.compile(r"[\u4e00-\u9fff]")
# Calls whose text arguments the user reads.
SHOWN = {
    "setText", "setToolTip", "setWindowTitle", "showMessage", "setPlaceholderText", "addAction",
    "addMenu", "setStatusTip", "setAccessibleName", "setAccessibleDescription", "setTitle",
    "addTab", "setTabText", "addItem", "addRow", "setLabelText", "setHeaderLabels",
    "setSuffix", "setPrefix", "setFormat", "QLabel", "QPushButton", "QToolButton", "QCheckBox",
    "QRadioButton", "QGroupBox", "QAction", "QMenu", "QMessageBox", "plain_label",
    "plain_tooltip",
}  # fmt: skip
NAMES = {"Docent", "&Docent", "tok"}  # the app's name and a unit, the same in every language


def _english(node: ast.expr) -> bool:
    """A literal (or an f-string's literal part) with a word in it, outside markup."""
    match node:
        case ast.Constant(value=str(text)):
            words = re.findall(r"[A-Za-z&]{2,}", re.sub(r"<[^>]*>", "", text))
            return any(word not in NAMES for word in words)
        case ast.JoinedStr(values=values):
            return any(_english(value) for value in values)
        case ast.IfExp(body=body, orelse=orelse):
            return _english(body) or _english(orelse)
        case ast.BinOp(left=left, right=right):
            return _english(left) or _english(right)
    return False


def _pyside_tool(tool: str, *arguments: str | Path) -> None:
    """Qt's lupdate or lrelease, as `make translations` runs them (PySide6 ships both)."""
    run = f"import sys; from PySide6.scripts.pyside_tool import {tool}; sys.exit({tool}())"
    subprocess.run(
        [sys.executable, "-c", run, *map(str, arguments)], check=True, capture_output=True
    )


def test_every_string_the_window_words_is_translated(tmp_path: Path) -> None:
    """What `make translations` would make of today's code adds nothing to translate: a new
    tr() string without its Chinese fails here."""
    updated = tmp_path / CATALOGUE.name
    shutil.copy(CATALOGUE, updated)
    sources = sorted(str(path) for path in UI.rglob("*.py"))
    _pyside_tool("lupdate", "-no-obsolete", "-locations", "none", *sources, "-ts", updated)
    text = updated.read_text(encoding="utf-8")
    untranslated = re.findall(
        r"<source>(.*?)</source>\s*<translation type=\"unfinished\"", text, re.DOTALL
    )
    assert untranslated == []
    assert text == CATALOGUE.read_text(encoding="utf-8")  # run `make translations`


def test_no_user_facing_text_escapes_translation() -> None:
    """Text handed to a widget is a tr() call's, never a bare English literal: in every file,
    the developer tools' (ui/tools) too, whose printed lines (timings, the smoke test's, which
    `make package-test` reads) stay English, as the CLI's do."""
    bare = []
    for path in sorted(UI.rglob("*.py")):
        name = path.relative_to(UI).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "attr", getattr(node.func, "id", None))
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
            if called in SHOWN and any(_english(argument) for argument in arguments):
                bare.append(f"{name}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert bare == []


def test_the_compiled_catalogue_is_the_committed_sources(tmp_path: Path) -> None:
    compiled = tmp_path / "docent_zh_CN.qm"
    _pyside_tool("lrelease", CATALOGUE, "-qm", compiled)
    assert compiled.read_bytes() == CATALOGUE.with_suffix(".qm").read_bytes()


@pytest.fixture
def chinese(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app as Docent starts it on a Chinese system, for this test only."""
    monkeypatch.setenv(ENVIRONMENT, "zh_CN")
    translators = install_translators(qapp, "system")
    yield
    for translator in translators:
        qapp.removeTranslator(translator)
        translator.deleteLater()


def _texts(window: QWidget) -> list[str]:
    labels = [label.text() for label in window.findChildren(QLabel) if label.isVisible()]
    buttons = [b.text() for b in window.findChildren(QAbstractButton) if b.isVisible()]
    return [text for text in labels + buttons if text]


@pytest.fixture
def window(chinese: None, loop: qasync.QEventLoop) -> Iterator[MainWindow]:
    yield from main_window(loop, embeddings=False)


def test_the_window_speaks_chinese(window: MainWindow) -> None:
    """Its menu, composer, sidebar and status bar: every visible text with Latin letters (a
    model's name may stay) has Chinese too."""
    menu = window.menuBar().actions()[0].menu()
    assert menu is not None
    texts = _texts(window) + [action.text() for action in menu.actions()]
    texts += [window.statusBar().currentMessage(), window.question.placeholderText()]
    assert "↑ 发送" in texts
    assert "设置…" in texts
    assert window.model_state.text() == "本地模型：qwen2.5-coder-0.5b（空闲）"
    english = [text for text in texts if re.search("[A-Za-z]{2}", text) and not HAN.search(text)]
    assert english == []


@pytest.mark.parametrize(
    ("setting", "locale", "language"),
    [
        ("system", QLocale("zh_CN"), "zh_CN"),
        ("system", QLocale("zh_SG"), "zh_CN"),
        ("system", QLocale("zh_TW"), "en"),
        ("system", QLocale("de_DE"), "en"),
        ("zh_CN", QLocale("en_US"), "zh_CN"),
        ("en", QLocale("zh_CN"), "en"),
    ],
)
def test_the_language_follows_the_setting_then_the_system(
    setting: str, locale: QLocale, language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert chosen_language(setting, locale) == language


@pytest.mark.parametrize("why", [reason for reason, _ in REASONS], ids=lambda why: why.code)
def test_the_badge_words_every_reason_code_in_chinese(chinese: None, why: Reason) -> None:
    words = reason_words(why)
    assert HAN.search(words)
    assert words != why.text
    quoted = [value for value in why.values.values() if isinstance(value, str)]
    assert all(value in words for value in quoted)  # a server's or a crash's own words


def test_the_language_is_chosen_on_the_general_page_for_the_next_start(
    docent: Docent, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    dialog = SettingsDialog(docent)
    loop.run_until_complete(dialog.loading)
    assert dialog.page_list.item(0).text() == "General"
    assert dialog.language.currentData() == "system"
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    assert loop.run_until_complete(dialog.submit()) is True
    assert Settings.load(docent.paths.settings_file).language == "zh_CN"
    assert chosen_language(docent.settings.language) == "zh_CN"
    dialog.deleteLater()


def test_the_library_speaks_chinese(chinese: None, qtbot: QtBot) -> None:
    """The sidebar's library parts word the core's numbers and states in Chinese too."""
    bar = IndexingBar()
    qtbot.addWidget(bar)
    bar.show_progress(IndexingProgress("reading", 312, 1000, 48.0, 170.0, embedding_after=True))
    assert bar.label.text() == "312/1,000 个文件 · 48 页/秒 · 约剩 3 分钟，之后进行向量化"
    bar.show_paused(True, 2)
    assert (bar.label.text(), bar.button.text()) == ("索引已暂停 · 2 个文件等待中", "继续")
    panel = DocumentsPanel(semantic=False)
    qtbot.addWidget(panel)
    panel.apply(FileIndexed(Path("/docs/a.pdf"), 1, 3, 9, None))
    assert panel.status("/docs/a.pdf") == "就绪"
    page = WatchedFoldersPage([], QLabel())
    qtbot.addWidget(page)
    texts = [label.text() for label in page.findChildren(QLabel) if label.text()]
    texts += [button.text() for button in page.findChildren(QAbstractButton)]
    assert texts
    assert all(HAN.search(text) for text in texts)


def test_a_recorded_answer_shown_again_words_its_reason_in_chinese(
    window: MainWindow, loop: qasync.QEventLoop
) -> None:
    """The history keeps the reason's code and values, not only its English words."""
    library = window.docent.library
    why = Reason("no_cloud_hard", parts=(Reason("parts", {"count": 2}),))
    conversation = loop.run_until_complete(library.create_conversation("为什么？"))
    record = HistoryRecord(
        question="为什么？", scope=[], answer="因为。", status="finished", error=None,
        route="local", model="m", reason=why.text, citations=[], retrieval_s=0.0, ttft_s=0.1,
        total_s=0.2, prompt_tokens=1, completion_tokens=1, tokens_per_s=None, cost_usd=0.0,
        grounded=1.0, conversation_id=conversation, why=why.as_dict(),
    )  # fmt: skip
    loop.run_until_complete(library.record(record))
    loop.run_until_complete(window.open_conversation(conversation))
    (card,) = window.turns.cards
    badge = card.version.badge
    assert reason_words(Reason("no_cloud")) in badge.reason.full_text()
    assert HAN.search(badge.hard.full_text())  # "looked hard: 2-part question", as live
    assert badge.nudge.isVisibleTo(card)
