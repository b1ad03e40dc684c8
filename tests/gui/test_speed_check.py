"""The first-run screen and Settings say how fast this computer runs the bundled model and which
local model that calls for; Settings measures again on request (the real bundled model)."""

from __future__ import annotations

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from app.bootstrap import Docent
from app.catalog import Catalog, Speed
from app.llm.speed import decide, describe
from app.paths import Paths
from app.settings import Settings
from tests.gui.conftest import close_window, open_window
from ui.window.window_state import WindowState


@pytest.mark.slow
def test_first_run_and_settings_show_the_measured_speed_and_the_choice(
    qapp: QApplication, loop: qasync.QEventLoop
) -> None:
    window = open_window(loop, Docent.from_environment(embeddings=False))
    docent = window.docent

    def shown() -> str:
        check = docent.settings.speed_check
        assert check is not None
        # The numbers the check saved, and the model chosen from them.
        text = describe(check, Catalog.load(), docent.settings.local.chat_model)
        assert f"at {check.prefill_tok_s:.0f} tokens/s reading a prompt and " in text
        assert f"would take about {check.predicted_ttft_s:.1f} s to start answering" in text
        return text

    async def session() -> None:
        await window.start()
        assert window.welcome is not None
        assert window.checking_speed is not None
        assert window.welcome.speed.text().startswith("Measuring how fast")
        assert window.welcome.busy.isVisible()
        await window.checking_speed
        # One sentence on the screen; the numbers behind it in its details.
        assert not window.welcome.busy.isVisible()
        sentence = window.welcome.speed.text()
        assert sentence.startswith(("On this computer, ", "This computer is fast enough")), sentence
        assert sentence.count(". ") == 0, sentence
        assert window.welcome.speed_details.text() == shown()

        dialog = window.open_settings()
        assert dialog.speed.text() == shown()
        first = docent.settings.speed_check
        dialog.measure_button.click()
        assert dialog.measuring is not None
        assert not dialog.measure_button.isEnabled()
        assert dialog.speed.text() == "Measuring (a few seconds)…"
        await dialog.measuring
        assert dialog.measure_button.isEnabled()
        assert docent.settings.speed_check != first  # measured again: other rates
        assert dialog.speed.text() == shown()
        saved = Settings.load(docent.paths.settings_file).speed_check
        assert saved == docent.settings.speed_check
        dialog.reject()
        await dialog.loading
        await window.wait_for_tasks()

    try:
        loop.run_until_complete(session())
    finally:
        close_window(loop, window)


def test_a_start_after_the_check_chose_the_larger_model_switches_to_it(
    qapp: QApplication, loop: qasync.QEventLoop
) -> None:
    # A fast computer's first run decided on the 1.5B; the app was closed before switching.
    check = decide(Catalog.load(), Speed(600, 60), 1200, "qwen2.5-coder-0.5b")
    paths = Paths.from_environment()
    Settings(speed_check=check).save(paths.settings_file)
    WindowState(first_run_done=True).save(paths.config_dir / "window.json")
    window = open_window(loop, Docent.from_environment(embeddings=False))

    async def session() -> None:
        await window.start()
        assert window.welcome is None
        assert window.checking_speed is not None
        await window.checking_speed
        assert window.docent.chat.loaded
        assert window.model_state.text() == "Local model: qwen2.5-coder-1.5b (ready)"
        assert window.statusBar().currentMessage() == "Local model: now qwen2.5-coder-1.5b."
        dialog = window.open_settings()
        assert dialog.model.text() == "qwen2.5-coder-1.5b"
        assert dialog.speed.text().endswith(
            "so Docent answers with Qwen2.5-Coder-1.5B-Instruct, which answers better."
        )
        dialog.reject()
        await dialog.loading

    try:
        loop.run_until_complete(session())
    finally:
        close_window(loop, window)
    saved = Settings.load(paths.settings_file)
    assert saved.local.chat_model == "qwen2.5-coder-1.5b"
    assert saved.speed_check is not None
    assert not saved.speed_check.pending
