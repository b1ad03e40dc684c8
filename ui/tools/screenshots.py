"""`make screenshots`: the real app on the bundled samples (its first-run screen, the empty
window, an English question and its follow-up, a Chinese question in a new conversation, the
same in a dark palette, a summary, a cloud answer with its details, a re-ask compared side by
side, a fallback when the cloud is down, settings, models, and the window in Chinese), captured
to PNG files for the README. Run it under Xvfb (or any display), with DOCENT_HOME pointing at an
empty folder so the first run is a first run. The Chinese interface is a second process on the
same home (DOCENT_LANGUAGE=zh_CN): the window's words are chosen as it is built."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path

import qasync
from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QWidget

from app.bootstrap import Docent
from app.cloud import routes
from app.cloud.gateway import Provider
from app.cloud.presets import PRESETS
from app.index.shared import SharedLibraryError
from app.processes import free_loopback_port, serving
from app.samples import SAMPLES, sample_path
from app.settings import CloudSettings, McpServerSettings
from ui.answer.turn_card import AnswerVersion
from ui.answer.turns import TurnsView
from ui.i18n import ENVIRONMENT, install_translators
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
CHINESE_LIVE = "正山小种产于哪里？"  # asked in the Chinese window: the badge's words are its own
# Asked on the cloud route once its server is down: the cloud fails before its first token.
_gateway_server = routes.gateway_server
FALLBACK = "Why are contracts kept for six years after they end?"
WIDE = (1600, 900)  # room for two answers side by side (COMPARE_WIDTH)
# A shared library on a loopback port nothing listens on: "Test connection" fails in real words.
UNREACHABLE_LIBRARY = "postgresql://docent@127.0.0.1:5433/library"


def _save(widget: QWidget, folder: Path, name: str) -> None:
    # The last layout requests, before the grab. Not processEvents(): run from a coroutine it
    # would resume other tasks inside this one (qasync refuses, and the speed check was lost).
    QApplication.sendPostedEvents()
    path = folder / name
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    print(path)


def _save_with_popup(window: QWidget, popup: QWidget | None, folder: Path, name: str) -> None:
    """The window with a pop-up of its own (the badge's details) drawn where it shows: a pop-up
    is a window of its own, missing from the window's grab, and a grab of the screen under Xvfb
    can come before it is painted."""
    QApplication.sendPostedEvents()
    shot = window.grab()
    if popup is not None and popup.isVisible():
        # As tall as its rows at its width: a wrapped row's size hint is for a narrower one.
        if (height := popup.heightForWidth(popup.width())) > 0:
            popup.resize(popup.width(), height)
        painter = QPainter(shot)
        at = popup.mapToGlobal(QPoint(0, 0)) - window.mapToGlobal(QPoint(0, 0))
        painter.drawPixmap(at, popup.grab())
        painter.end()
    path = folder / name
    if not shot.save(str(path)):
        raise OSError(f"could not write {path}")
    print(path)


def _save_details(window: MainWindow, folder: Path, name: str) -> None:
    """The window with the newest answer's details open."""
    card = window.turns.current
    assert card is not None
    details = card.badge.open_details()
    _save_with_popup(window, details, folder, name)
    if details is not None:
        details.close()


async def _until(done: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """A top-level window's new size arrives from the display server: wait for its layout."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not take its new size")
        await asyncio.sleep(0.05)


async def _settled(versions: Sequence[AnswerVersion]) -> None:
    """An answer's text lays itself out for a new width a few turns of the loop later: until
    then its height is the old width's, and what follows it is drawn over it."""

    def fitted() -> bool:
        for version in versions:
            text = version.answer
            margins = text.contentsMargins()
            wanted = round(text.document().size().height()) + margins.top() + margins.bottom()
            if version.isVisible() and text.height() < wanted:
                return False
        return True

    await asyncio.sleep(0.2)  # the resize and layout requests go round once
    await _until(fitted)


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


def _patient_gateway(providers: Sequence[Provider]) -> McpServerSettings:
    """The gateway, waiting 300 s for a first token: a cloud answers in a second or two, the
    1.5B stand-in on a busy 2-core machine took over the gateway's 30 s (the shot showed a
    fallback, not a cloud answer)."""
    return _gateway_server(providers).model_copy(update={"first_token_timeout_s": 300.0})


@contextlib.contextmanager
def _stand_in_cloud(models_dir: Path, log: Path) -> Iterator[str]:
    port = free_loopback_port()
    command = [
        sys.executable, str(STAND_IN_SERVER), "--model", str(models_dir / STAND_IN),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192",
        "--model_alias", "gpt-4.1-mini",
    ]  # fmt: skip
    with serving(command, "Uvicorn running on", log, timeout_s=180):
        routes.gateway_server = _patient_gateway
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            routes.gateway_server = _gateway_server


async def _cloud_answer(window: MainWindow, folder: Path) -> None:
    """A hard question the router sends to the cloud: its cost and reason, with its details
    open; asked again on this computer, the two versions side by side; then, the cloud's
    server gone, a question on the cloud route answered locally (the fallback, and why)."""
    docent = window.docent
    # Its log in the run's throw-away home: beside the screenshots it was left in the checkout.
    log = docent.paths.cache_dir / "stand-in-server.log"
    with _stand_in_cloud(docent.paths.models_dir, log) as url:
        provider = {"name": "openai", "base_url": url, "models": ["gpt-4.1-mini"]}
        cloud = CloudSettings.model_validate({"providers": [provider]})
        await docent.apply_settings(docent.settings.model_copy(update={"cloud": cloud}))
        await docent.cloud_session.ready()  # asked before, the router has no cloud yet
        window.new_conversation()
        await window.ask(HARD)
        await _thumbnails(window.turns)
        _save_details(window, folder, "12-cloud-answer.png")
        card = window.turns.current
        assert card is not None
        await window.ask(HARD, "local")  # "Re-ask on this computer": Answer 2 of 2
        await _thumbnails(window.turns)
        window.resize(*WIDE)
        await _until(lambda: card.compare.isVisible())
        card.compare.setChecked(True)
        await _settled(card.versions)
        _save(window, folder, "14-compare.png")
        card.compare.setChecked(False)
        window.resize(1280, 800)
        await _until(lambda: window.width() == 1280)
    # The server is gone, the cloud still set up: its call fails before the first token.
    window.new_conversation()
    await window.ask(FALLBACK, "cloud")
    await _thumbnails(window.turns)
    _save_details(window, folder, "13-fallback.png")  # the reason whole: the line has its head
    await docent.apply_settings(docent.settings.model_copy(update={"cloud": CloudSettings()}))


@contextlib.asynccontextmanager
async def _opened(app: QApplication) -> AsyncIterator[MainWindow]:
    """The app's window on the home in DOCENT_HOME, in DOCENT_LANGUAGE's words, then shut."""
    docent = Docent.from_environment()
    install_translators(app, docent.settings.language)
    await docent.open()
    window = MainWindow(docent)
    try:
        window.resize(1280, 800)
        window.show()
        yield window
    finally:
        await window.shutdown()
        await docent.close()
        window.close()


async def _shoot(app: QApplication, folder: Path) -> None:
    async with _opened(app) as window:
        docent = window.docent
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
            taken: list[str] = []

            def reading() -> None:  # the banner's first count, grabbed as it is drawn
                if not taken and window.adding.label.text().startswith("Adding"):
                    taken.append(window.adding.label.text())
                    _save(window, folder, "17-indexing.png")

            window.adding.shown.connect(reading)
            await window.add_paths([*samples, broken])
            window.adding.shown.disconnect(reading)
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
        summary.turns.verticalScrollBar().setValue(0)  # the summary from its first section
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
        dialog.resize(1200, 740)  # each model's price whole, not under a scroll bar
        _save(dialog, folder, "04-settings-cloud.png")
        dialog.reject()
        await _shared_library(window, folder)
        models = window.open_models()
        models.select("qwen2.5-7b-instruct")
        _save(models, folder, "05-models.png")
        models.close()


async def _shared_library(window: MainWindow, folder: Path) -> None:
    """Settings → Library with a shared library's address tested, and the window as it opens
    when that library cannot be reached (a loopback port nothing listens on: real words)."""
    dialog = window.open_library_settings()
    await dialog.loading
    box = dialog.shared_library
    box.setChecked(True)
    box.url.setText(UNREACHABLE_LIBRARY)
    await box.test_connection()
    _save(dialog, folder, "18-settings-shared-library.png")
    dialog.reject()
    try:
        await window.docent.look_at_shared_library(UNREACHABLE_LIBRARY, None)
    except SharedLibraryError as error:
        window.show_library_problem(UNREACHABLE_LIBRARY, error)
    _save(window, folder, "19-shared-library-unreachable.png")
    window.library_problem.hide()


async def _shoot_chinese(app: QApplication, folder: Path) -> None:
    """The window in Chinese on the library and history the English run left: a Chinese
    question asked in it, then its answer's details."""
    async with _opened(app) as window:
        await window.start(welcome=False)
        await window.ask(CHINESE_LIVE)
        await _thumbnails(window.turns)
        _save(window, folder, "15-chinese-interface.png")
        _save_details(window, folder, "16-chinese-details.png")


def main(arguments: list[str]) -> int:
    chinese = arguments[:1] == ["--chinese"]
    arguments = arguments[1:] if chinese else arguments
    folder = Path(arguments[0] if arguments else "docs/screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Docent")
    apply_theme(app)
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        runner.run((_shoot_chinese if chinese else _shoot)(app, folder))
    if not chinese:  # the same home in Chinese: a process of its own, its words built so
        command = [sys.executable, "-m", "ui.tools.screenshots", "--chinese", str(folder)]
        subprocess.run(command, env=os.environ | {ENVIRONMENT: "zh_CN"}, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
