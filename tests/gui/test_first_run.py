"""The first-run screen: shown beside the window on the very first start, never again; scripts and
tests that drive the window can leave it out. Three short blocks, the details folded away with
"Open folder" buttons instead of printed paths, one screen high; Start closes it, "Set up a
cloud model…" leads to where a provider is added. No money shows anywhere without a cloud."""

from __future__ import annotations

from pathlib import Path

import qasync
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QLabel,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QTreeWidget,
    QWidget,
)

from app.bootstrap import Docent
from tests.gui.waiting import until
from ui.settings.settings_dialog import SettingsDialog
from ui.window.first_run import FirstRunDialog
from ui.window.main_window import MainWindow

SCREEN_WIDTH, SCREEN_HEIGHT = 1280, 800  # a small laptop's screen


def visible_texts(root: QWidget) -> list[str]:
    """Every text a user can see in `root` now: labels, buttons, boxes, list and table rows,
    menus and the status bar's message (not tooltips: those need a hover)."""
    texts = [root.windowTitle()]
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.isVisible():
            continue
        match widget:
            case QLabel() | QAbstractButton():
                texts.append(widget.text())
            case QLineEdit():
                texts += [widget.text(), widget.placeholderText()]
            case QListWidget():
                texts += [widget.item(row).text() for row in range(widget.count())]
            case QTreeWidget():
                for row in range(widget.topLevelItemCount()):
                    item = widget.topLevelItem(row)
                    texts += [item.text(column) for column in range(item.columnCount())]
    if isinstance(root, QMainWindow):
        texts.append(root.statusBar().currentMessage())
        for menu in root.menuBar().actions():
            texts += [menu.text(), *(action.text() for action in menu.menu().actions())]
    return [text for text in texts if text]


class OpenedUrls(QObject):
    """Where "Open folder" sends the desktop: the file manager is not Docent's to start here."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def run_window(loop: qasync.QEventLoop, *, welcome: bool = True, close: str = "cloud") -> bool:
    """Start a window as the app does; True if the first-run screen was shown. It is closed
    with its Start button (`close="start"`) or its cloud link (`close="cloud"`)."""
    docent = Docent.from_environment(embeddings=False)
    loop.run_until_complete(docent.open())
    window = MainWindow(docent)
    window.show()

    async def session() -> bool:
        await window.start(welcome=welcome)
        shown = window.welcome is not None and window.welcome.isVisible()
        if shown and close == "start":
            assert window.welcome is not None
            window.welcome.start_button.click()
            assert not window.welcome.isVisible()
        if shown and close == "cloud":
            assert window.welcome is not None
            window.welcome.cloud_button.click()  # straight to where a provider is added
            assert not window.welcome.isVisible()
            dialogs = [d for d in window.findChildren(SettingsDialog) if d.isVisible()]
            assert len(dialogs) == 1
            assert dialogs[0].tabs.currentWidget() is dialogs[0].providers
            for dialog in dialogs:
                dialog.reject()
                await dialog.loading
        if window.indexing is not None:
            await window.indexing  # the guide, indexed on the first run
        return shown

    try:
        return loop.run_until_complete(session())
    finally:
        loop.run_until_complete(window.shutdown())
        loop.run_until_complete(docent.close())
        window.close()
        window.deleteLater()


def test_the_first_run_screen_is_shown_once(qapp: QApplication, loop: qasync.QEventLoop) -> None:
    assert run_window(loop, close="start") is True
    assert run_window(loop) is False  # closed once: never again


def test_it_leads_to_the_cloud_settings(qapp: QApplication, loop: qasync.QEventLoop) -> None:
    assert run_window(loop) is True


def test_a_script_can_leave_it_out(qapp: QApplication, loop: qasync.QEventLoop) -> None:
    assert run_window(loop, welcome=False) is False
    assert run_window(loop) is False  # the first run is over, shown or not


def test_it_fits_one_screen_prints_no_path_and_opens_the_folders(
    qapp: QApplication, docent: Docent
) -> None:
    dialog = FirstRunDialog(docent)
    dialog.show()
    paths = docent.paths
    written = [paths.database.parent, paths.settings_file.parent, paths.models_dir]
    texts = visible_texts(dialog)
    assert "Private by default" in texts
    assert "Drop your documents" in texts
    assert "Cloud is optional" in texts
    assert [b.text() for b in dialog.findChildren(QAbstractButton) if b.isVisible()] == [
        "Details",
        "Set up a cloud model…",
        "Start",
    ]  # no Skip: closing the screen is what Start does
    assert dialog.start_button.isDefault()
    assert dialog.busy.isVisible()  # the speed check is running
    assert not dialog.details.isVisible()
    assert dialog.width() <= SCREEN_WIDTH
    # Sized to its text (no blank band above the buttons), and well within the screen.
    assert dialog.height() == dialog.layout().totalHeightForWidth(dialog.width())
    assert dialog.height() <= SCREEN_HEIGHT * 0.6

    dialog.details_button.click()
    shown = "\n".join(visible_texts(dialog))
    assert "Qwen2.5-Coder-0.5B-Instruct (Q4, GGUF), 491 MB" in shown
    assert "Models…." not in shown
    assert "$" not in shown  # no cloud set up: no money
    assert not any(str(folder) in shown for folder in written)  # no path in the text
    assert "/" + Path.home().name not in shown
    assert dialog.height() == dialog.layout().totalHeightForWidth(dialog.width())
    assert dialog.height() <= SCREEN_HEIGHT - 80  # with the details open, above a taskbar
    opened = OpenedUrls()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        for button in dialog.folder_buttons.values():
            button.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [Path(url.toLocalFile()) for url in opened.urls] == written
    assert [button.toolTip() for button in dialog.folder_buttons.values()] == list(
        map(str, written)
    )  # the path on demand

    dialog.show_speed(failure="the model would not load")
    assert not dialog.busy.isVisible()
    assert dialog.speed.text() == (
        "Docent could not measure this computer's speed: the model would not load"
    )
    dialog.close()
    dialog.deleteLater()


def test_the_guide_docent_adds_itself_raises_no_adding_banner(
    qapp: QApplication, loop: qasync.QEventLoop
) -> None:
    """The banner follows what the user adds; the guide of a first run is Docent's own, and
    the first-run screen says when it is in the library instead."""
    docent = Docent.from_environment(embeddings=False)
    loop.run_until_complete(docent.open())
    window = MainWindow(docent)
    window.show()
    announced: list[str] = []
    window.adding.shown.connect(lambda: announced.append(window.adding.label.text()))

    async def first_run() -> FirstRunDialog:
        await window.start()
        welcome = window.welcome
        assert welcome is not None
        assert welcome.guide.text() == "A short guide is being added to your library…"
        await until(welcome.guide_shown, lambda: "guide is in" in welcome.guide.text())
        assert window.indexing is not None
        await window.indexing
        return welcome

    try:
        welcome = loop.run_until_complete(first_run())
        assert welcome.guide.text() == (
            "The guide is in your library: try the questions the window offers."
        )
        assert window.empty_state.question_buttons  # the questions it means
        assert announced == []
        assert not window.adding.isVisible()
        welcome.start_button.click()
    finally:
        loop.run_until_complete(window.shutdown())
        loop.run_until_complete(docent.close())
        window.close()
        window.deleteLater()
