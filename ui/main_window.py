"""The main window: drop documents anywhere, ask, watch the answer, its route and its cost.

Everything slow runs in the core's workers; the window only awaits the core's event streams on
the qasync loop, and keeps a reference to every task it starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.answering import Finished, Source, Token
from app.bootstrap import Docent
from app.cloud.health import Health, HealthState
from app.index import EmbeddingProgress
from app.llm.engine import CancelToken
from app.routing import Route
from app.watch import FolderChanges, FolderWatch
from ui.conversation import ConversationPanel
from ui.documents_panel import DocumentsPanel
from ui.first_run import FirstRunDialog
from ui.mcp_serving import McpServing
from ui.page_preview import PagePreview
from ui.session_panel import SessionPanel
from ui.settings_dialog import SettingsDialog
from ui.window_state import WindowState

if TYPE_CHECKING:
    from ui.bench_window import BenchmarkWindow
    from ui.model_manager import ModelManager


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class QuestionBox(QPlainTextEdit):
    """Enter sends, Shift+Enter makes a new line.

    Signals: submitted(str) — the question, when Enter is pressed on non-blank text.
    """

    submitted = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setPlaceholderText("Ask about your documents… (Enter sends, Shift+Enter: new line)")
        self.setFixedHeight(64)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            question = self.toPlainText().strip()
            if question:
                self.clear()
                self.submitted.emit(question)
            return
        super().keyPressEvent(event)


class MainWindow(QMainWindow):
    """Signals: token_shown() — after each streamed token is shown (tests and benchmarks wait
    on it); answer_finished() — after an answer ends, however it ended; folders_synced() — after
    changes in the watched folders reached the index."""

    token_shown = Signal()
    answer_finished = Signal()
    folders_synced = Signal()

    def __init__(self, docent: Docent) -> None:
        super().__init__()
        self.docent = docent
        self.setWindowTitle("Docent")
        self.setAcceptDrops(True)
        self.documents = DocumentsPanel()
        self.session = SessionPanel()
        self.documents.remove_requested.connect(self.remove)
        self.documents.reindex_requested.connect(
            lambda paths: self.add_paths([Path(p) for p in paths], force=True)
        )
        self.conversation = ConversationPanel()
        self.conversation.source_clicked.connect(self.show_source)
        self.conversation.reask_requested.connect(self._reask)
        self.conversation.sent_requested.connect(self.show_sent)
        self.previews: list[PagePreview] = []
        self.model_manager: ModelManager | None = None
        self.benchmark: BenchmarkWindow | None = None
        self.model_notice: QMessageBox | None = None
        self.welcome: FirstRunDialog | None = None
        self.question = QuestionBox()
        self.question.submitted.connect(self.ask)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.stop)
        QShortcut(QKeySequence.StandardKey.Open, self, self.choose_files)
        QShortcut(QKeySequence.StandardKey.Preferences, self, self.open_settings)
        settings_menu = self.menuBar().addMenu("&Docent")
        settings_menu.addAction("Add documents…", self.choose_files)
        settings_menu.addAction("Models…", self.open_models)
        settings_menu.addAction("Benchmark…", self.open_benchmark)
        settings_menu.addAction("Settings…", self.open_settings)

        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.stop_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.conversation, 1)
        right_layout.addLayout(ask_row)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.documents)
        left.addWidget(self.session)
        left.setSizes([420, 280])
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([380, 700])
        self.setCentralWidget(splitter)
        self.resize(1100, 700)
        self.statusBar().showMessage("Drop documents here, or press Ctrl+O.")
        self.model_state = QLabel()
        self.library_state = QLabel()
        self.cloud_state = QLabel()
        self.statusBar().addPermanentWidget(self.library_state)
        self.statusBar().addPermanentWidget(self.model_state)
        self.statusBar().addPermanentWidget(self.cloud_state)
        self.serving = McpServing(docent)
        self.statusBar().addPermanentWidget(self.serving.label)
        self._show_model_state()
        self._show_cloud_state()

        self._state_file = docent.paths.config_dir / "window.json"
        self.state = WindowState.load(self._state_file)
        if geometry := self.state.geometry_bytes():
            self.restoreGeometry(QByteArray(geometry))

        self._tasks: set[asyncio.Task[Any]] = set()
        self._cancel: CancelToken | None = None
        self.indexing: asyncio.Task[None] | None = None
        self.answering: asyncio.Task[None] | None = None
        self.watching: asyncio.Task[None] | None = None
        self.folder_watch: FolderWatch | None = None

    # --- background work -----------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # referenced until done, so it cannot be collected mid-flight
        task.add_done_callback(self._tasks.discard)
        return task

    async def wait_for_tasks(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        """Stop the answer, cancel indexing (it resumes next start) and wait for both."""
        self.save_state()
        self.stop()
        for preview in list(self.previews):
            await preview.close_async()
        if self.model_manager is not None:
            await self.model_manager.close_async()
        if self.benchmark is not None:
            await self.benchmark.close_async()
        await self.serving.stop()
        for task in list(self._tasks):
            task.cancel()
        await self.wait_for_tasks()

    async def refresh(self) -> None:
        documents = await self.docent.library.documents()
        self.documents.show_library(documents)
        size = await asyncio.to_thread(_file_size, self.docent.paths.database)
        chunks = sum(d.chunks for d in documents)
        self.library_state.setText(
            f"Library: {len(documents)} documents, {chunks} chunks, {size / 2**20:.1f} MB"
        )

    def _show_model_state(self, loading: bool = False) -> None:
        name = self.docent.settings.local.chat_model
        state = "loading…" if loading else "ready" if self.docent.chat_model_loaded else "idle"
        self.model_state.setText(
            f"Local model: {Path(name).stem if name.endswith('.gguf') else name} ({state})"
        )

    def _show_cloud_state(self, changed: Health | None = None) -> None:
        """Cloud / MCP health, live: every session reports its changes here."""
        health = self.docent.cloud.health() if self.docent.cloud else []
        if not health:
            self.cloud_state.setText("Cloud: not configured")
            self.cloud_state.setToolTip("Add a provider or an MCP server in Settings.")
            return
        ready = sum(h.state is HealthState.READY for h in health)
        self.cloud_state.setText(f"Cloud: {ready}/{len(health)} ready")
        self.cloud_state.setToolTip("\n".join(h.describe() for h in health))

    async def start(self, *, welcome: bool = True) -> None:
        """Check the chat model, show the library, restore the scope and connect the cloud
        routes; on the very first run, index the guide and (unless `welcome` is False: a
        script or a test that drives the window) show the first-run screen beside it."""
        self._tell_model_notice(await self.docent.check_chat_model())
        await self.docent.start_cloud(self._show_cloud_state)
        self._show_cloud_state()
        await self.serving.apply()
        await self.refresh()
        self.documents.tick(self.state.scope)
        self.watch_folders()
        if not self.state.first_run_done:
            self.state.first_run_done = True
            self.save_state()
            if welcome:
                self.show_welcome()
            guide = resources.files("resources").joinpath("sample/welcome-to-docent.md")
            self.add_paths([Path(str(guide))])

    def show_welcome(self) -> FirstRunDialog:
        self.welcome = FirstRunDialog(self.docent, self)
        self.welcome.settings_requested.connect(
            lambda: self.open_settings().tabs.setCurrentIndex(1)  # Cloud providers
        )
        self.welcome.show()  # not modal: the window works behind it
        return self.welcome

    def save_state(self) -> None:
        self.state.set_geometry(bytes(self.saveGeometry().data()))
        self.state.scope = self.documents.ticked_paths()
        self.state.save(self._state_file)

    # --- documents -------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and all(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [Path(url.toLocalFile()) for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.add_paths(paths)

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Add documents")
        if files:
            self.add_paths([Path(name) for name in files])

    def add_paths(self, paths: Sequence[Path], *, force: bool = False) -> asyncio.Task[None]:
        for path in paths:
            self.documents.row(path)
        previous = self.indexing
        self.indexing = self._spawn(self._index(list(paths), previous, force))
        return self.indexing

    def remove(self, paths: Sequence[str]) -> asyncio.Task[None]:
        return self._spawn(self._remove(list(paths)))

    async def _remove(self, paths: list[str]) -> None:
        by_path = {d.path: d for d in await self.docent.library.documents()}
        for path in paths:
            if (document := by_path.get(path)) is not None:
                await self.docent.library.remove(document.id)
            self.documents.forget(path)
        self.statusBar().showMessage(f"Removed {len(paths)} document(s).", 5000)

    async def _index(
        self, paths: list[Path], previous: asyncio.Task[None] | None, force: bool
    ) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)  # one batch after another
        async for event in self.docent.ingestor.index(paths, force=force):
            self.documents.apply(event)
        await self.refresh()

        def show(progress: EmbeddingProgress) -> None:
            if progress.total:
                self.statusBar().showMessage(f"Embedding {progress.done}/{progress.total} chunks…")

        await self.docent.library.embed_pending(show)
        await self.refresh()
        self.statusBar().showMessage("Library up to date.", 5000)

    def _tell_model_notice(self, notice: str | None) -> None:
        """The chosen chat model is missing or corrupt and the bundled one answers instead."""
        self._show_model_state()
        if notice:
            self.model_state.setToolTip(notice)
            self.statusBar().showMessage(notice)
            if self.model_notice is not None:
                self.model_notice.deleteLater()
            self.model_notice = QMessageBox(
                QMessageBox.Icon.Warning, "Local model", notice, parent=self
            )
            self.model_notice.open()  # not exec(): the window keeps working behind it

    def open_models(self) -> ModelManager:
        """One model manager, kept while the window lives (a download may be paused in it)."""
        if self.model_manager is None:
            # Loaded when first opened: its download client (httpx) would slow every start-up.
            from ui.model_manager import ModelManager

            self.model_manager = ModelManager(self.docent, self)
            self.model_manager.switched.connect(self._model_switched)
        self.model_manager.refresh()
        self.model_manager.show()
        return self.model_manager

    def open_benchmark(self) -> BenchmarkWindow:
        """One Benchmark window, kept while the main window lives (with its last results)."""
        if self.benchmark is None:
            # Loaded when first opened: QtCharts and the bench suites cost every start-up ~20 ms.
            from ui.bench_window import BenchmarkWindow

            self.benchmark = BenchmarkWindow(self.docent, self)
        self.benchmark.show()
        return self.benchmark

    def _model_switched(self, choice: str) -> None:
        self._show_model_state()
        self.statusBar().showMessage(f"Local model: now {choice}.", 5000)

    # --- watched folders ---------------------------------------------------------------------

    def watch_folders(self) -> asyncio.Task[None] | None:
        """Follow the watched folders from now on, after catching up with what changed there
        while Docent was closed; a new call (the settings changed) replaces the old watch."""
        previous = self.watching
        if previous is not None:
            previous.cancel()
        folders = [Path(folder) for folder in self.docent.settings.library.watched_folders]
        self.watching = self._spawn(self._watch(folders, previous)) if folders else None
        return self.watching

    async def _watch(self, folders: list[Path], previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)  # its thread has stopped
        watch = self.folder_watch = FolderWatch(self.docent.library, folders)
        try:
            if missing := await asyncio.to_thread(watch.missing):
                names = ", ".join(str(folder) for folder in missing)
                self.statusBar().showMessage(f"Watched folder not found: {names}")
            self.sync_folders(await watch.pending(), "Changed while Docent was closed")
            async for changes in watch.changes():
                self.sync_folders(changes, "Changed in watched folders")
        finally:
            watch.close()

    def sync_folders(self, changes: FolderChanges, why: str) -> asyncio.Task[None]:
        """Remove and (re)index what changed, after any indexing already under way."""
        if changes:
            self.statusBar().showMessage(f"{why}: {changes.describe()}…")
        for path in changes.index:
            self.documents.row(path)
        previous = self.indexing
        self.indexing = self._spawn(self._sync(changes, previous))
        return self.indexing

    async def _sync(self, changes: FolderChanges, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        if changes.remove:
            await self._remove(changes.remove)
        if changes.index:
            await self._index(changes.index, None, False)
        self.folders_synced.emit()

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.docent, self)
        dialog.applied.connect(lambda: self.statusBar().showMessage("Settings applied.", 5000))
        dialog.applied.connect(self._show_model_state)
        dialog.applied.connect(self._show_cloud_state)
        dialog.applied.connect(self.watch_folders)
        dialog.applied.connect(lambda: self._spawn(self.serving.apply()))
        dialog.models_requested.connect(
            lambda: self.open_models().switched.connect(
                dialog.model.setText, Qt.ConnectionType.UniqueConnection
            )
        )
        dialog.show()
        return dialog

    def show_source(self, source: Source) -> PagePreview:
        preview = PagePreview(self.docent, Path(source.path), source.page, source.text, self)
        self.previews.append(preview)
        preview.finished.connect(self._forget_closed_previews)
        preview.show()
        return preview

    def show_sent(self, text: str) -> QDialog:
        """Exactly what a cloud call sent: the privacy setting, made visible."""
        dialog = QDialog(self)
        dialog.setWindowTitle("What was sent to the cloud")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        view = QPlainTextEdit(text)
        view.setReadOnly(True)
        QVBoxLayout(dialog).addWidget(view)
        dialog.resize(700, 500)
        dialog.show()
        return dialog

    def _forget_closed_previews(self) -> None:
        for preview in [p for p in self.previews if not p.isVisible()]:
            self.previews.remove(preview)
            preview.deleteLater()

    # --- questions -------------------------------------------------------------------------

    def ask(self, question: str, route: Route | None = None) -> asyncio.Task[None]:
        """Answer `question`; `route` forces local or cloud (re-ask with the other route)."""
        self.stop()
        self._cancel = CancelToken()
        self.answering = self._spawn(self._answer(question, self._cancel, route))
        return self.answering

    def _reask(self, question: str, route: str) -> None:
        self.ask(question, "cloud" if route == "cloud" else "local")

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    async def _answer(self, question: str, cancel: CancelToken, route: Route | None) -> None:
        self.stop_button.setEnabled(True)
        self.conversation.begin(question)
        try:
            self._show_model_state(loading=not self.docent.chat_model_loaded)
            answerer = await self.docent.answerer()
            self._tell_model_notice(self.docent.take_model_notice())
            scope = self.documents.scope()
            async for event in answerer.answer(question, scope, cancel, route):
                self.conversation.apply(event)
                if isinstance(event, Token):
                    self.token_shown.emit()
                elif isinstance(event, Finished):
                    self.session.add(event.metrics)
        finally:
            self.stop_button.setEnabled(False)
            self.answer_finished.emit()
