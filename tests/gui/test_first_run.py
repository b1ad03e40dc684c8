"""The first-run screen: shown beside the window on the very first start, skippable, never again;
scripts and tests that drive the window can leave it out."""

from __future__ import annotations

import qasync
from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from ui.settings.settings_dialog import SettingsDialog
from ui.window.main_window import MainWindow


def run_window(loop: qasync.QEventLoop, *, welcome: bool = True, skip: bool = False) -> bool:
    """Start a window as the app does; True if the first-run screen was shown."""
    docent = Docent.from_environment(embeddings=False)
    loop.run_until_complete(docent.open())
    window = MainWindow(docent)
    window.show()

    async def session() -> bool:
        await window.start(welcome=welcome)
        shown = window.welcome is not None and window.welcome.isVisible()
        if shown and skip:
            assert window.welcome is not None
            window.welcome.skip_button.click()
            assert not window.welcome.isVisible()
        if shown and not skip:
            assert window.welcome is not None
            text = window.welcome.text.text()
            assert "Qwen2.5-Coder-0.5B-Instruct (Q4, GGUF), 491 MB" in text
            assert str(docent.paths.database) in text
            assert str(docent.paths.models_dir) in text
            assert "Settings (Ctrl+,) → Cloud providers" in text
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
    assert run_window(loop, skip=True) is True
    assert run_window(loop) is False  # skipped once: never again


def test_it_leads_to_the_cloud_settings(qapp: QApplication, loop: qasync.QEventLoop) -> None:
    assert run_window(loop) is True


def test_a_script_can_leave_it_out(qapp: QApplication, loop: qasync.QEventLoop) -> None:
    assert run_window(loop, welcome=False) is False
    assert run_window(loop) is False  # the first run is over, shown or not
