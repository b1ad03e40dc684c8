"""`make screenshots`: the real app on the bundled samples (its first-run screen, the empty
window, an English question and its follow-up, a Chinese question in a new conversation, the
same in a dark palette, a summary, settings, models), captured to PNG files for the README. Run
it under Xvfb (or any display), with DOCENT_HOME pointing at an empty folder so the first run is
a first run."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication, QWidget

from app.bootstrap import Docent
from app.cloud.presets import PRESETS
from app.processes import free_loopback_port, serving
from app.samples import SAMPLES, sample_path
from app.settings import CloudSettings
from ui.answer.turns import TurnsView
from ui.i18n import install_translators
from ui.theme import apply_theme, dark_palette
from ui.window.main_window import MainWindow

ENGLISH = "How long are customer invoices kept, and who approves deletion?"
HARD = "Compare how long invoices and payroll records are kept: why do the two periods differ?"
# The cloud answer's stand-in: the 1.5B behind llama.cpp's own OpenAI-compatible server on
# 127.0.0.1, configured and priced as openai/gpt-4.1-mini (no cloud is reachable from here).
STAND_IN = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
STAND_IN_SERVER = Path(__file__).resolve().parents[2] / "tests" / "peers" / "llama_server.py"
FOLLOW_UP = "And where are the records stored?"
CHINESE = "乌龙茶的发酵程度是多少？"


def _save(widget: QWidget, folder: Path, name: str) -> None:
    # The last layout requests, before the grab. Not processEvents(): run from a coroutine it
    # would resume other tasks inside this one (qasync refuses, and the speed check was lost).
    QApplication.sendPostedEvents()
    path = folder / name
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    print(path)


async def _thumbnails(conversation: TurnsView) -> None:
    for turn in conversation.cards:
        if turn.sources.loading is not None:
            await turn.sources.loading


async def _mid_stream(window: MainWindow, question: str, folder: Path) -> None:
    """The answer while it streams: the badge ticking, part of the text in."""
    tokens = 0
    halfway = asyncio.Event()

    def counted() -> None:
        nonlocal tokens
        tokens += 1
        if tokens == 12:
            halfway.set()

    window.token_shown.connect(counted)
    answering = window.ask(question)
    await halfway.wait()
    _save(window, folder, "11-mid-stream.png")
    window.token_shown.disconnect(counted)
    await answering


@contextlib.contextmanager
def _stand_in_cloud(models_dir: Path, log: Path) -> Iterator[str]:
    port = free_loopback_port()
    command = [
        sys.executable, str(STAND_IN_SERVER), "--model", str(models_dir / STAND_IN),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
        "--model_alias", "gpt-4.1-mini",
    ]  # fmt: skip
    with serving(command, "Uvicorn running on", log, timeout_s=180):
        yield f"http://127.0.0.1:{port}/v1"


async def _cloud_answer(window: MainWindow, folder: Path) -> None:
    """A hard question the router sends to the cloud: its cost and reason, and the details
    (the screen is grabbed: the details are a pop-up of their own)."""
    docent = window.docent
    with _stand_in_cloud(docent.paths.models_dir, folder.parent / "stand-in-server.log") as url:
        provider = {"name": "openai", "base_url": url, "models": ["gpt-4.1-mini"]}
        cloud = CloudSettings.model_validate({"providers": [provider]})
        await docent.apply_settings(docent.settings.model_copy(update={"cloud": cloud}))
        await docent.cloud_session.ready()  # asked before, the router has no cloud yet
        window.new_conversation()
        await window.ask(HARD)
        await _thumbnails(window.turns)
        assert window.turns.current is not None
        details = window.turns.current.badge.open_details()
        QApplication.sendPostedEvents()
        screen = QApplication.primaryScreen().grabWindow(0)
        if not screen.save(str(folder / "12-cloud-answer.png")):
            raise OSError("could not write 12-cloud-answer.png")
        print(folder / "12-cloud-answer.png")
        if details is not None:
            details.close()
        await docent.apply_settings(docent.settings.model_copy(update={"cloud": CloudSettings()}))


async def _shoot(app: QApplication, folder: Path) -> None:
    docent = Docent.from_environment()
    # DOCENT_LANGUAGE=zh_CN takes them in Chinese.
    install_translators(app, docent.settings.language)
    await docent.open()
    window = MainWindow(docent)
    try:
        window.resize(1280, 800)
        window.show()
        await window.start()
        if window.indexing is not None:
            await window.indexing  # the guide: nothing may run while a grab processes events
        if window.welcome is not None:  # a fresh home: the first run shows its screen
            _save(window.welcome, folder, "00-first-run.png")
            window.welcome.accept()
        _save(window, folder, "06-empty-state.png")
        samples = [sample_path(name) for name in SAMPLES]
        broken = folder.parent / "broken-screenshot.pdf"  # a PDF in name only: it fails
        broken.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8)
        try:
            window.drop_overlay.show_for([*samples, broken])  # as a drag over the window
            _save(window, folder, "09-drop-overlay.png")
            window.drop_overlay.hide()
            await window.add_paths([*samples, broken])
            _save(window, folder, "10-failed-document.png")
        finally:
            broken.unlink()
        await _mid_stream(window, ENGLISH, folder)
        await window.ask(FOLLOW_UP)
        await _thumbnails(window.turns)
        _save(window, folder, "01-answer.png")
        window.show_source(window.turns.cited_sources()[0])
        preview = window.previews[-1]
        if preview.loading is not None:
            await preview.loading
        _save(preview, folder, "02-page-preview.png")
        await preview.close_async()
        window.new_conversation()
        await window.ask(CHINESE)
        await _thumbnails(window.turns)
        await window.refresh_conversations()
        _save(window, folder, "03-chinese-answer.png")
        light = QApplication.palette()
        QApplication.setPalette(dark_palette())
        _save(window, folder, "07-dark.png")
        QApplication.setPalette(light)
        policy = {d.name: d.id for d in await docent.library.documents()}[SAMPLES[0]]
        summary = window.summarize(policy)
        await summary.preparing
        summary.start()
        assert summary.summarizing is not None
        await summary.summarizing
        await _thumbnails(summary.turns)
        summary.resize(900, 700)
        _save(summary, folder, "08-summary.png")
        summary.close()
        await _cloud_answer(window, folder)
        dialog = window.open_settings()
        await dialog.loading
        dialog.tabs.setCurrentWidget(dialog.providers)
        # What the page looks like while a user adds a provider: the OpenRouter preset, two
        # models typed (one priced, one not).
        dialog.add_provider(next(p for p in PRESETS if p.name == "openrouter"))
        for model in ("openai/gpt-4o-mini", "anthropic/claude-3.5-haiku", "qwen/qwen3-32b"):
            dialog.provider_models.typed.setText(model)
            dialog.provider_models.add_typed()
        _save(dialog, folder, "04-settings-cloud.png")
        dialog.reject()
        models = window.open_models()
        models.select("qwen2.5-7b-instruct")
        _save(models, folder, "05-models.png")
        models.close()
    finally:
        await window.shutdown()
        await docent.close()
        window.close()


def main(arguments: list[str]) -> int:
    folder = Path(arguments[0] if arguments else "docs/screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Docent")
    apply_theme(app)
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run(_shoot(app, folder))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
