"""The main window: drop documents anywhere, ask, watch the answer, its route and its cost.

Everything slow runs in the core's workers; the window only awaits the core's event streams on
the qasync loop, and keeps a reference to every task it starts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDropEvent, QShortcut, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.answering import Failed, Finished, InConversation, Source, Token
from app.answering.conversation import Conversation
from app.bootstrap import EMBEDDED_LIBRARY, Docent
from app.cloud.health import Health, HealthState
from app.errors import DocentError
from app.index import EmbeddingProgress
from app.index.shared import SharedLibraryError, redacted, without_password
from app.intake import (
    BatchFailed,
    BatchFinished,
    BatchStarted,
    EmbeddingFailed,
    FileFailed,
    FileIndexed,
    FileRemoved,
    FileSkipped,
    FileStarted,
    FoldersChanged,
    Idle,
    IndexingProgress,
    IntakeEvent,
    LibraryChanged,
    OcrFailed,
    OcrProgress,
    PagesParsed,
    PauseChanged,
    WatchProblem,
)
from app.intake.watch import FolderWatch
from app.llm.chat_model import shown_name
from app.llm.engine import CancelToken
from app.routing import Route
from app.samples import GUIDE, SAMPLES, sample_path
from ui import keys
from ui.answer.page_preview import PagePreview
from ui.answer.source_cards import Thumbnails
from ui.answer.turn_card import TurnCard
from ui.answer.turns import TurnsView
from ui.background import Background
from ui.library.adding_banner import AddingBanner
from ui.library.documents_panel import DocumentsPanel
from ui.library.empty_state import EmptyState, dropped_paths
from ui.library.indexing_bar import IndexingBar
from ui.library.library_pane import LibraryPane
from ui.plain import plain_label, plain_tooltip
from ui.settings.mcp_serving import McpServing
from ui.shortcuts import show_shortcuts
from ui.window.composer import Composer
from ui.window.conversation_header import ConversationHeader
from ui.window.conversation_list import ConversationList
from ui.window.drop_overlay import DropOverlay
from ui.window.first_run import FirstRunDialog
from ui.window.library_problem import LibraryProblemBar
from ui.window.notifications import LongJobNotifier, NotificationsButton
from ui.window.session_panel import SessionPanel
from ui.window.window_state import WindowState

if TYPE_CHECKING:
    from ui.answer.summary_dialog import SummaryDialog
    from ui.bench.window import BenchmarkWindow
    from ui.settings.model_manager import ModelManager
    from ui.settings.settings_dialog import SettingsDialog


ROWS_PER_TURN = 100


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class MainWindow(QMainWindow):
    """Signals: token_shown() — after each streamed token is shown (tests and benchmarks wait
    on it); answer_finished() — after an answer ends, however it ended; folders_synced() — after
    changes in the watched folders reached the index; answers_shown() — after an answer
    recorded anywhere (this window, its MCP server) is in the sidebar and the spending;
    library_requested(str) — the user chose another library (a shared library's URL or
    EMBEDDED_LIBRARY): the app reopens on it (ui.main)."""

    token_shown = Signal()
    answer_finished = Signal()
    folders_synced = Signal()
    answers_shown = Signal()
    library_requested = Signal(str)

    def __init__(self, docent: Docent) -> None:
        super().__init__()
        self.docent = docent
        self.setWindowTitle("Docent")
        self.setAcceptDrops(True)
        self.background = Background(self._report_failure)
        self.documents = DocumentsPanel(semantic=docent.library.embeds)
        self.session = SessionPanel()
        self.documents.remove_requested.connect(self.remove)
        self.documents.reindex_requested.connect(
            lambda paths: self.add_paths([Path(p) for p in paths], force=True)
        )
        self.documents.summarize_requested.connect(self.summarize)
        self.indexing_bar = IndexingBar()
        self.indexing_bar.pause_requested.connect(
            lambda: self.background.run(docent.intake.pause())
        )
        self.indexing_bar.resume_requested.connect(
            lambda: self.background.run(docent.intake.unpause())
        )
        self.library_problem = LibraryProblemBar()
        self.library_problem.retry_requested.connect(
            lambda: self.library_requested.emit(self._chosen_library())
        )
        self.library_problem.settings_requested.connect(self.open_library_settings)
        self.adding = AddingBanner()
        self.adding.show_requested.connect(self.documents.show_paths)
        self.summaries: list[SummaryDialog] = []
        self.turns = TurnsView(Thumbnails(docent), self.background)
        self.turns.source_clicked.connect(self.show_source)
        self.turns.reask_requested.connect(self._reask)
        self.turns.cloud_setup_requested.connect(self.open_cloud_settings)
        self.turns.sent_requested.connect(self.show_sent)
        self.turns.edit_requested.connect(self.edit_question)
        self._editing: TurnCard | None = None  # the card an edited question will replace
        self.empty_state = EmptyState()
        self.empty_state.paths_dropped.connect(self.add_paths)
        self.empty_state.add_requested.connect(self.choose_files)
        self.empty_state.samples_requested.connect(
            lambda: self.add_paths([sample_path(name) for name in SAMPLES])
        )
        self.empty_state.question_chosen.connect(self.ask)
        self.pages = QStackedWidget()  # the empty state until the first question
        self.pages.addWidget(self.empty_state)
        self.pages.addWidget(self.turns)
        self.conversation_list = ConversationList(docent.desk, self.background)
        self.conversation_list.open_requested.connect(self.open_conversation)
        self.conversation_list.delete_requested.connect(self.delete_conversation)
        self.conversation_list.new_requested.connect(self.new_conversation)
        self.conversation_list.exported.connect(
            lambda path: self.statusBar().showMessage(
                self.tr("Exported the conversation to {path}").format(path=path)
            )
        )
        self.current = Conversation()  # the next question continues it
        self.previews: list[PagePreview] = []
        self.model_manager: ModelManager | None = None
        self.benchmark: BenchmarkWindow | None = None
        self.model_notice: QMessageBox | None = None
        self.forget_offer: QMessageBox | None = None  # after a removal: its quoting answers
        self.welcome: FirstRunDialog | None = None
        self.checking_speed: asyncio.Task[None] | None = None  # or switching after the check
        self.header = ConversationHeader(docent, self.background)
        self.header.settings_requested.connect(self.open_cloud_settings)
        self.composer = Composer(self.documents)
        self.question = self.composer.question
        self.question.submitted.connect(self._send)
        self.send_button = self.composer.send
        self.composer.send_clicked.connect(lambda: self._send(self.composer.take_question()))
        self.composer.stop_clicked.connect(self.stop)
        QShortcut(keys.sequence(keys.STOP), self, self.stop)
        QShortcut(keys.sequence(keys.ADD_DOCUMENTS), self, self.choose_files)
        QShortcut(keys.sequence(keys.SETTINGS), self, self.open_settings)
        QShortcut(keys.sequence(keys.NEW_CONVERSATION), self, self.new_conversation)
        QShortcut(keys.sequence(keys.SHORTCUTS), self, lambda: show_shortcuts(self))
        settings_menu = self.menuBar().addMenu("&Docent")
        settings_menu.addAction(self.tr("Add documents…"), self.choose_files)
        settings_menu.addAction(self.tr("Models…"), self.open_models)
        settings_menu.addAction(self.tr("Benchmark…"), self.open_benchmark)
        settings_menu.addAction(self.tr("Settings…"), self.open_settings)

        ask_row = QHBoxLayout()
        ask_row.setContentsMargins(12, 0, 12, 0)  # the cards' side margins: one right edge
        ask_row.addWidget(self.composer)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 8)
        right_layout.addWidget(self.header)
        right_layout.addWidget(self.library_problem)
        right_layout.addWidget(self.adding)
        right_layout.addWidget(self.pages, 1)
        right_layout.addLayout(ask_row)
        self.drop_overlay = DropOverlay(right)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.conversation_list)
        self.library = LibraryPane(self.documents, self.indexing_bar)
        self.library.add_requested.connect(self.choose_files)
        left.addWidget(self.library)
        left.addWidget(self.session)
        left.setSizes([200, 300, 200])
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([380, 700])
        self.setCentralWidget(splitter)
        self.splitters = (splitter, left)  # remembered in this order
        self.question.setFocus()  # the window opens ready for a question
        self.resize(1100, 700)
        self.statusBar().showMessage(self.tr("Drop documents here, or press Ctrl+O."))
        self.model_state = plain_label()
        self.library_state = plain_label()
        self.cloud_state = QToolButton()  # a click opens Settings at the cloud providers
        self.cloud_state.setAutoRaise(True)
        self.cloud_state.clicked.connect(self.open_cloud_settings)
        self.serving = McpServing(docent)
        for index, widget in enumerate((self.library_state, self.model_state, self.cloud_state)):
            if index:  # " · " between them: they ran into each other
                self.statusBar().addPermanentWidget(plain_label("·"))
            self.statusBar().addPermanentWidget(widget)
        serving_dot = plain_label("·")  # only beside the MCP server's state, when it has one
        serving_dot.hide()
        self.serving.changed.connect(
            lambda: serving_dot.setVisible(bool(self.serving.label.text()))
        )
        self.statusBar().addPermanentWidget(serving_dot)
        self.statusBar().addPermanentWidget(self.serving.label)
        self.notifications = NotificationsButton()
        self.statusBar().addPermanentWidget(self.notifications)
        self.long_jobs = LongJobNotifier(self)
        self._batch_started: dict[int, float] = {}  # a batch's number: when it started
        self._show_model_state()
        self._show_cloud_state()

        self._state_file = docent.paths.config_dir / "window.json"
        self.state = WindowState.load(self._state_file)
        if geometry := self.state.geometry_bytes():
            self.restoreGeometry(QByteArray(geometry))
        for restored, state in zip(self.splitters, self.state.splitter_states(), strict=False):
            restored.restoreState(QByteArray(state))  # False, and no change, when damaged
        self.session.set_collapsed(self.state.session_collapsed)

        self._cancel: CancelToken | None = None
        self.indexing: asyncio.Task[None] | None = None
        self.answering: asyncio.Task[None] | None = None
        # What the window has shown of the intake: batches up to this one, and the embedding
        # that followed them (add_paths' tasks end there).
        self._shown = asyncio.Condition()
        self._shown_batch = 0
        self._finished_batch = 0
        # Subscribed now, so no event is missed; read by a task started from the loop (qasync
        # drops callbacks that come due while it is stopped, as between a test's steps).
        self._intake_events = docent.intake.subscribe()
        self._following: asyncio.Task[None] | None = None  # the task showing them
        # Answers recorded by whoever asked (an MCP client of this window's server too).
        self._answers = docent.desk.subscribe()

    # --- background work -----------------------------------------------------------------

    def _report_failure(self, error: BaseException) -> None:
        """Background work that failed says why, instead of leaving the window as it was."""
        self.statusBar().showMessage(self.tr("Failed: {error}").format(error=error))

    @property
    def folder_watch(self) -> FolderWatch | None:
        return self.docent.intake.folder_watch

    async def wait_for_tasks(self) -> None:
        await self.background.wait()

    async def shutdown(self) -> None:
        """Stop the answer, cancel indexing (it resumes next start) and wait for both."""
        self.save_state()
        self.stop()
        for preview in list(self.previews):
            await preview.close_async()
        for summary in self.summaries:
            await summary.close_async()
        if self.model_manager is not None:
            await self.model_manager.close_async()
        if self.benchmark is not None:
            await self.benchmark.close_async()
        await self.serving.stop()
        await self.background.close()
        self._intake_events.close()
        self._answers.close()

    async def refresh(self) -> None:
        documents = await self.docent.library.documents()
        # A slice at a time, the loop turning between them: a folder of a thousand just
        # indexed, shown at once, held the GUI thread for tens of ms even with the fixes in
        # DocumentsPanel.show_library.
        for start in range(0, len(documents), ROWS_PER_TURN):
            self.documents.show_library(documents[start : start + ROWS_PER_TURN])
            await asyncio.sleep(0)
        self.empty_state.show_library([document.name for document in documents])
        self.composer.scope.show_scope()
        chunks = sum(d.chunks for d in documents)
        count = len(documents)
        if (shared := self.docent.library.shared) is None:
            size = await asyncio.to_thread(_file_size, self.docent.paths.database)
            self.library_state.setText(
                self.tr("Library: 1 document")
                if count == 1
                else self.tr("Library: {n} documents").format(n=count)
            )
            where = self.tr("the library's file: {size:.1f} MB").format(size=size / 2**20)
        else:
            self.library_state.setText(
                self.tr("Shared library: 1 document")
                if count == 1
                else self.tr("Shared library: {n} documents").format(n=count)
            )
            where = self.tr("the shared library: {location}").format(location=redacted(shared.url))
        self.library_state.setToolTip(
            plain_tooltip(
                self.tr("{chunks} passages to search; {where}").format(chunks=chunks, where=where)
            )
        )

    def _show_model_state(self, loading: bool = False) -> None:
        if self.docent.settings.local.server.enabled:
            self._show_server_state()
            return
        self.model_state.setText(
            self.tr("Local model: {model} ({state})").format(
                model=shown_name(self.docent.settings.local.chat_model),
                state=self._here_state(loading),
            )
        )
        if (engine := self.docent.chat.state) is not None:
            self.model_state.setToolTip(
                plain_tooltip(self.tr("Runs on: {state}").format(state=engine.describe()))
            )

    def _here_state(self, loading: bool = False) -> str:
        """The model on this computer: loading, idle (not loaded) or ready."""
        engine = self.docent.chat.state
        if loading:
            state = self.tr("loading…")
        elif not self.docent.chat.loaded:
            state = self.tr("idle")
        elif engine is not None and engine.safe_mode is not None:
            state = self.tr("ready, safe settings")
        else:
            state = self.tr("ready")
        return state

    def _show_server_state(self) -> None:
        """The local route on the user's model server: its model and host, and whether it
        answered the last request (known once one was sent); the model on this computer, which
        answers when it cannot, in the tooltip."""
        server = self.docent.chat.server
        reached = None if server is None else server.reached
        if reached is None:
            state = self.tr("not asked yet")
        elif reached[0]:
            state = self.tr("reachable")
        else:
            state = self.tr("unreachable")
        self.model_state.setText(
            self.tr("Model server: {model} ({state})").format(
                model=self.docent.chat.shown, state=state
            )
        )
        here = self.tr("When it cannot answer, {model} on this computer does ({state}).").format(
            model=shown_name(self.docent.settings.local.chat_model), state=self._here_state()
        )
        if reached is not None and reached[1]:
            here = self.tr("Last request: {error}").format(error=reached[1]) + "\n" + here
        self.model_state.setToolTip(plain_tooltip(here))

    def _show_cloud_state(self, changed: Health | None = None) -> None:
        """Cloud / MCP health, live: every session reports its changes here."""
        configured = self.docent.settings.cloud.configured
        self.session.show_cloud(configured)  # money shows then
        self.turns.cloud_set_up = configured
        health = self.docent.cloud.health() if self.docent.cloud else []
        self.header.show_choices()  # "Cloud only" follows the cloud's health
        if not health:
            self.cloud_state.setText(self.tr("Cloud: not set up"))
            self.cloud_state.setToolTip(
                plain_tooltip(self.tr("Click to add a provider or an MCP server in Settings."))
            )
            return
        ready = sum(h.state is HealthState.READY for h in health)
        self.cloud_state.setText(
            self.tr("Cloud: {ready}/{total} ready").format(ready=ready, total=len(health))
        )
        self.cloud_state.setToolTip(plain_tooltip("\n".join(h.describe() for h in health)))

    async def start(self, *, welcome: bool = True) -> None:
        """Check the chat model, show the library, restore the scope and connect the cloud
        routes; on the very first run, index the guide and (unless `welcome` is False: a
        script or a test that drives the window) show the first-run screen beside it."""
        self._follow_intake()
        self.background.run(self._follow_answers(), listener=True)
        if self.docent.library.shared is not None:
            self.background.run(self._follow_shared_library(), listener=True)
        self._tell_model_notice(await self.docent.chat.check())
        await self.docent.cloud_session.start(self._show_cloud_state)
        self._show_cloud_state()
        await self.serving.apply()
        await self.refresh()
        await self.docent.desk.budget.load()
        self.session.show_spending(self.docent.desk.budget)
        self.header.show_spending()
        await self.refresh_conversations()
        self.documents.tick(self.state.scope)
        self.watch_folders()
        await self.docent.intake.resume()
        if not self.state.first_run_done:
            self.state.first_run_done = True
            self.save_state()
            # The guide is this person's: never added to the documents a team shares.
            guide = [] if self.docent.library.shared else [sample_path(GUIDE)]
            indexing = self.add_paths(guide, announce=False)
            if welcome:
                self.show_welcome()
                self.checking_speed = self.background.run(self._check_speed(indexing))
        else:
            self.checking_speed = self.background.run(self._follow_speed_check())

    def show_welcome(self) -> FirstRunDialog:
        self.welcome = FirstRunDialog(self.docent, self)
        self.welcome.settings_requested.connect(self.open_cloud_settings)
        self.welcome.show()  # not modal: the window works behind it
        return self.welcome

    async def _check_speed(self, indexing: asyncio.Task[None]) -> None:
        """First run: time the bundled model once the guide is indexed (its embedding would
        share the cores), say in the first-run screen what that means, and follow it."""
        assert self.welcome is not None
        await indexing
        self.welcome.show_guide_ready()
        try:
            await self.docent.check_speed()
        except DocentError as error:
            self.welcome.show_speed(failure=str(error))
            return
        self.welcome.show_speed()
        await self._follow_speed_check()

    async def _follow_speed_check(self, settings: SettingsDialog | None = None) -> None:
        """Switch to the model the speed check chose, once it is prepared (the bundled model
        answers meanwhile); nothing when no switch is due. An open Settings dialog is told, so
        its OK does not switch back."""
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:  # on the thread that joins the model
            text = self.tr("Preparing the local model the speed check chose: {percent}%…").format(
                percent=done * 100 // total
            )
            loop.call_soon_threadsafe(self.statusBar().showMessage, text)

        if await self.docent.follow_speed_check(progress):
            self._model_switched(self.docent.settings.local.chat_model)
            if self.welcome is not None:
                self.welcome.show_speed()
            if settings is not None:
                settings.model.setText(self.docent.settings.local.chat_model)
                settings.speed.setText(self.docent.describe_speed())

    def save_state(self) -> None:
        self.state.set_geometry(bytes(self.saveGeometry().data()))
        self.state.set_splitters([bytes(s.saveState().data()) for s in self.splitters])
        self.state.scope = self.documents.ticked_paths()
        self.state.session_collapsed = self.session.collapsed
        self.state.save(self._state_file)

    # --- documents -------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if paths := dropped_paths(event):
            event.acceptProposedAction()
            self.drop_overlay.show_for(paths)

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.drop_overlay.hide()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_overlay.hide()
        if paths := dropped_paths(event):
            event.acceptProposedAction()
            self.add_paths(paths)

    def choose_files(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, self.tr("Add documents"))
        if files:
            self.add_paths([Path(name) for name in files])

    def add_paths(
        self, paths: Sequence[Path], *, force: bool = False, announce: bool = True
    ) -> asyncio.Task[None]:
        """Index files and folders; the task ends once the window shows them indexed and
        embedded. `announce` False: no "Adding documents" banner (the guide Docent adds on its
        own, which the first-run screen tells about)."""
        for path in paths:
            self.documents.row(path.expanduser().absolute())  # as the intake will name it
        batch = self.docent.intake.add(paths, force=force)
        if announce and not force:  # a re-index adds nothing
            self.adding.follow(batch, len(paths))
        self.indexing = self.background.run(self._until_shown(batch))
        return self.indexing

    def remove(self, paths: Sequence[str]) -> asyncio.Task[None]:
        return self.background.run(self._remove(list(paths)))

    async def _remove(self, paths: list[str]) -> None:
        self._follow_intake()
        removed = [d.id for d in await self.docent.library.documents() if d.path in set(paths)]
        await self.docent.intake.remove(paths)
        self.statusBar().showMessage(
            self.tr("Removed 1 document.")
            if len(paths) == 1
            else self.tr("Removed {count} documents.").format(count=len(paths)),
            5000,
        )
        if quoting := await self.docent.desk.answers_quoting(removed):
            self._offer_to_forget(quoting)

    def _offer_to_forget(self, answers: list[int]) -> None:
        """A removed document's passages live on in the answers that quoted them: offered for
        deletion (a follow-up never sends them again either way)."""
        one = len(answers) == 1
        question = (
            self.tr("1 answer in your conversations and history quotes the removed document. "
                    "Delete it too?")
            if one
            else self.tr("{count} answers in your conversations and history quote the removed "
                         "document. Delete them too?").format(count=len(answers))
        )  # fmt: skip
        offer = QMessageBox(
            QMessageBox.Icon.Question,
            self.tr("Removed document"),
            question
            + "\n\n"
            + self.tr(
                "Either way, a follow-up question never sends the removed document's text again."
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        delete = offer.button(QMessageBox.StandardButton.Yes)
        delete.setText(
            self.tr("Delete 1 answer")
            if one
            else self.tr("Delete {count} answers").format(count=len(answers))
        )
        offer.button(QMessageBox.StandardButton.No).setText(self.tr("Keep"))
        offer.setTextFormat(Qt.TextFormat.PlainText)
        delete.clicked.connect(lambda: self.background.run(self._forget(answers)))
        self.forget_offer = offer
        offer.open()  # not exec(): the window keeps working behind it

    async def _forget(self, answers: list[int]) -> None:
        forgotten = await self.docent.desk.forget_answers(answers)
        self.statusBar().showMessage(
            self.tr("Deleted {count} answer(s) quoting it.").format(count=forgotten), 5000
        )

    async def _until_shown(self, batch: int) -> None:
        self._follow_intake()
        async with self._shown:
            await self._shown.wait_for(lambda: self._shown_batch >= batch)

    def _follow_intake(self) -> None:
        """Show what the intake does, whoever asked for it (a drop, a watched folder)."""

        async def follow() -> None:
            async for event in self._intake_events:
                try:
                    await self._show(event)
                except Exception as error:  # one event shown wrong stops nothing
                    self.statusBar().showMessage(
                        self.tr("Failed to show indexing: {error}").format(error=error)
                    )

        if self._following is None:
            self._following = self.background.run(follow(), listener=True)

    async def _show(self, event: IntakeEvent) -> None:
        self.adding.apply(event)
        match event:
            case FileFailed(path=path, reason=reason):
                self.documents.apply(event)
                self.notifications.add(
                    self.tr("{file} failed: {reason}").format(file=path.name, reason=reason)
                )
            case FileStarted() | PagesParsed() | FileIndexed() | FileSkipped() | OcrProgress():
                self.documents.apply(event)
            case OcrFailed(path=path, page=page, reason=reason):
                message = self.tr("OCR of {file}, page {page}: {reason}").format(
                    file=path.name, page=page, reason=reason
                )
                self.statusBar().showMessage(message)
                self.notifications.add(message)
            case FileRemoved(path=path):
                self.documents.forget(path)
            case FoldersChanged(changes=changes, why=why):
                self.statusBar().showMessage(f"{why}: {changes.describe()}…")
                for added in changes.index:
                    self.documents.row(added)
            case WatchProblem(message=message) | BatchFailed(reason=message):
                self.statusBar().showMessage(message)
                self.notifications.add(message)
            case BatchStarted(batch=batch):
                self._batch_started[batch] = time.monotonic()
            case IndexingProgress():
                self.indexing_bar.show_progress(event)
            case PauseChanged(paused=paused, waiting=waiting):
                self.indexing_bar.show_paused(paused, waiting)
            case BatchFinished(batch=batch, kind=kind, indexed=indexed, failed=failed):
                self._finished_batch = batch
                took = time.monotonic() - self._batch_started.pop(batch, time.monotonic())
                if indexed or failed:
                    self.long_jobs.finished(
                        self.tr("{indexed} documents added, {failed} failed").format(
                            indexed=indexed, failed=failed
                        ),
                        took,
                    )
                if kind == "sync":
                    self.folders_synced.emit()
            case LibraryChanged():
                await self.refresh()
            case EmbeddingProgress(done=done, total=total) if total:
                self.statusBar().showMessage(
                    self.tr("Embedding {done}/{total} chunks…").format(done=done, total=total)
                )
            case EmbeddingFailed(reason=reason, lasting=lasting):
                if lasting:  # no vectors are coming: the rows show their final state
                    self.documents.semantic_off(reason)
                self.statusBar().showMessage(
                    self.tr("Semantic search is not up to date: {reason}").format(reason=reason)
                )
            case Idle():
                self.indexing_bar.finished()
                self.statusBar().showMessage(self.tr("Library up to date."), 5000)
                async with self._shown:
                    self._shown_batch = self._finished_batch
                    self._shown.notify_all()

    def _tell_model_notice(self, notice: str | None) -> None:
        """The chosen chat model is missing or corrupt and the bundled one answers instead, or it
        crashed here and now runs with safe settings."""
        self._show_model_state()
        if notice:
            self.model_state.setToolTip(plain_tooltip(notice))
            self.statusBar().showMessage(notice)
            if self.model_notice is not None:
                self.model_notice.deleteLater()
            self.model_notice = QMessageBox(
                QMessageBox.Icon.Warning, self.tr("Local model"), notice, parent=self
            )
            self.model_notice.setTextFormat(Qt.TextFormat.PlainText)
            self.model_notice.open()  # not exec(): the window keeps working behind it

    def open_models(self) -> ModelManager:
        """One model manager, kept while the window lives (a download may be paused in it)."""
        if self.model_manager is None:
            # Loaded when first opened: its download client (httpx) would slow every start-up.
            from ui.settings.model_manager import ModelManager

            self.model_manager = ModelManager(self.docent, self)
            self.model_manager.switched.connect(self._model_switched)
        self.model_manager.refresh()
        self.model_manager.show()
        return self.model_manager

    def open_benchmark(self) -> BenchmarkWindow:
        """One Benchmark window, kept while the main window lives (with its last results)."""
        if self.benchmark is None:
            # Loaded when first opened: QtCharts and the bench suites cost every start-up ~20 ms.
            from ui.bench.window import BenchmarkWindow

            self.benchmark = BenchmarkWindow(self.docent, self)
        self.benchmark.show()
        return self.benchmark

    def _model_switched(self, choice: str) -> None:
        self._show_model_state()
        self.statusBar().showMessage(
            self.tr("Local model: now {model}.").format(model=choice), 5000
        )

    # --- watched folders ---------------------------------------------------------------------

    def watch_folders(self) -> None:
        """Follow the watched folders from now on, after catching up with what changed there
        while Docent was closed; a new call (the settings changed) replaces the old watch."""
        folders = [Path(folder) for folder in self.docent.settings.library.watched_folders]
        self.docent.intake.watch(folders)

    def open_settings(self) -> SettingsDialog:
        # Loaded when first opened, as the summary dialog: they import the keychain and the
        # summary pipeline, which start-up does not need.
        from ui.settings.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.docent, self, self.serving.token)
        dialog.applied.connect(
            lambda: self.statusBar().showMessage(self.tr("Settings applied."), 5000)
        )
        dialog.applied.connect(self._show_model_state)
        dialog.applied.connect(self._show_cloud_state)  # and the header's route menu
        dialog.applied.connect(self.watch_folders)
        dialog.applied.connect(lambda: self.background.run(self.serving.apply()))
        dialog.applied.connect(self._follow_library_setting)
        dialog.speed_checked.connect(
            lambda: self.background.run(self._follow_speed_check(dialog))  # a switch it calls for
        )
        dialog.show()
        return dialog

    def open_library_settings(self) -> SettingsDialog:
        dialog = self.open_settings()
        dialog.reveal(dialog.shared_library)
        return dialog

    def _chosen_library(self) -> str:
        """The library the settings name, as `Docent.library_location` names the open one."""
        url = self.docent.settings.library.shared_url
        return without_password(url) if url else EMBEDDED_LIBRARY

    def _follow_library_setting(self) -> None:
        """Another library chosen in Settings (or the one that failed, chosen again)."""
        if (chosen := self._chosen_library()) != self.docent.library_location:
            self.statusBar().showMessage(self.tr("Opening the library…"))
            self.library_requested.emit(chosen)

    def show_library_problem(self, location: str, error: SharedLibraryError) -> None:
        """The shared library `location` could not be opened: this window is on the one here."""
        self.library_problem.show_problem(location, error.reason)

    def open_cloud_settings(self) -> SettingsDialog:
        dialog = self.open_settings()
        dialog.reveal(dialog.providers)
        return dialog

    def show_source(self, source: Source) -> PagePreview:
        preview = PagePreview.of_source(self.docent, source, self)
        self.previews.append(preview)
        preview.finished.connect(self._forget_closed_previews)
        # Closed (Escape), it hands the keyboard back to where the user was, window manager or not.
        preview.finished.connect(self.activateWindow)
        preview.show()
        return preview

    def summarize(self, document_id: int) -> SummaryDialog:
        from ui.answer.summary_dialog import SummaryDialog  # see open_settings

        dialog = SummaryDialog(self.docent, document_id, self)
        dialog.source_clicked.connect(self.show_source)
        dialog.cloud_setup_requested.connect(self.open_cloud_settings)
        self.summaries.append(dialog)
        dialog.show()
        return dialog

    def show_sent(self, text: str) -> QDialog:
        """Exactly what a cloud call sent: the privacy setting, made visible."""
        dialog = QDialog(self)
        dialog.setWindowTitle(self.tr("What was sent to the cloud"))
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

    # --- conversations ---------------------------------------------------------------------

    async def _follow_answers(self) -> None:
        async for _changed in self._answers:
            self._show_model_state()  # a model server's reachability, after any answer
            await self.refresh_conversations()
            self.session.show_spending(self.docent.desk.budget)
            self.header.show_spending()
            self.answers_shown.emit()

    async def _follow_shared_library(self) -> None:
        """Another desktop's documents, shown as its writes commit (the database notifies);
        a burst of them while the list was being shown is one refresh more, not one each."""
        seen = 0
        while True:
            seen = await self.docent.library.changed_elsewhere(seen)
            await self.refresh()

    async def refresh_conversations(self) -> None:
        listed = await self.docent.desk.conversations()
        self.conversation_list.show_conversations(listed, self.current.id)
        titles = [c.title for c in listed if c.id == self.current.id and c.id is not None]
        self._show_title(titles[0] if titles else "")

    def _show_title(self, title: str) -> None:
        """The conversation's title above it and in the window's title bar."""
        self.header.show_title(title)
        self.setWindowTitle(self.tr("{title} — Docent").format(title=title) if title else "Docent")

    def new_conversation(self) -> None:
        """Ctrl+N: the next question starts a conversation of its own."""
        self.stop()
        self._editing = None
        self.current = Conversation()
        self._show_title("")
        self.turns.clear()
        self.pages.setCurrentWidget(self.empty_state)
        self.conversation_list.list.clearSelection()
        self.question.setFocus()

    def open_conversation(self, conversation_id: int) -> asyncio.Task[None]:
        return self.background.run(self._open_conversation(conversation_id))

    async def _open_conversation(self, conversation_id: int) -> None:
        self.stop()
        self._editing = None
        self.current = await self.docent.desk.open(conversation_id)
        self.turns.replay(self.current.entries)
        self.pages.setCurrentWidget(self.turns)
        await self.refresh_conversations()  # its title, above it

    def delete_conversation(self, conversation_id: int) -> asyncio.Task[None]:
        return self.background.run(self._delete_conversation(conversation_id))

    async def _delete_conversation(self, conversation_id: int) -> None:
        if self.current.id == conversation_id:
            self.new_conversation()
        await self.docent.desk.delete(conversation_id)
        await self.refresh_conversations()

    # --- questions -------------------------------------------------------------------------

    def ask(
        self, question: str, route: Route | None = None, replacing: TurnCard | None = None
    ) -> asyncio.Task[None]:
        """Answer `question`; `route` forces local or cloud (re-ask with the other route);
        `replacing`: the card of an edited question, which goes with the later ones first."""
        self.stop()
        earlier = self.answering
        self._cancel = CancelToken()
        self.composer.set_answering(True)  # Send is Stop from the click on
        self.answering = self.background.run(
            self._answer(question, self._cancel, route, replacing, earlier)
        )
        return self.answering

    def _send(self, question: str) -> asyncio.Task[None]:
        """The question box's question: an edited one replaces the turn it was taken from."""
        replacing, self._editing = self._editing, None
        return self.ask(question, replacing=replacing)

    def edit_question(self, card: TurnCard) -> None:
        """A card's "Edit question": the question goes back into the box, and sending it
        replaces that turn and drops the later ones (they rested on its answer)."""
        self._editing = card
        self.question.setPlainText(card.question)
        self.question.moveCursor(QTextCursor.MoveOperation.End)
        self.question.setFocus()
        self.statusBar().showMessage(
            self.tr("Editing a question: sending it replaces its answer and the ones after it")
        )

    async def _drop_turns_from(self, card: TurnCard, earlier: asyncio.Task[None] | None) -> None:
        """Take `card` and the later cards away, and their recorded answers from the
        conversation (its next question continues from the turn before)."""
        if earlier is not None and not earlier.done():
            await asyncio.wait([earlier])  # stopped above: its card must be done before it goes
        if card not in self.turns.cards:
            return  # the conversation was left meanwhile
        first_dropped = self.turns.drop_from(self.turns.cards.index(card))
        if first_dropped is not None:
            await self.docent.desk.drop_turns(self.current, first_dropped)

    def _reask(self, question: str, route: str) -> None:
        self.ask(question, "cloud" if route == "cloud" else "local")

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()

    async def _answer(
        self,
        question: str,
        cancel: CancelToken,
        route: Route | None,
        replacing: TurnCard | None = None,
        earlier: asyncio.Task[None] | None = None,
    ) -> None:
        self.pages.setCurrentWidget(self.turns)
        try:
            if replacing is not None:
                await self._drop_turns_from(replacing, earlier)
            newest = self.turns.current
            again = newest is not None and newest.question.strip() == question.strip()
            if again and self.current.asks_again(question):
                self.turns.again()  # a retry or re-ask: another version of the newest answer
            else:
                if newest is not None and newest.history_id is not None:
                    self.current.choose(newest.history_id)  # the version the user looks at
                self.turns.begin(question)
            self._show_model_state(loading=not self.docent.chat.loaded)
            scope = self.documents.scope()
            conversation = self.current
            events = self.docent.desk.ask(
                question, scope, route=route, conversation=conversation, cancel=cancel
            )
            loading = True
            async for event in events:
                if loading:  # the model is up: its state, and what loading it had to do
                    loading = False
                    self._tell_model_notice(self.docent.chat.take_notice())
                self.turns.apply(event)
                if isinstance(event, InConversation):
                    await self.refresh_conversations()
                elif isinstance(event, Token):
                    self.token_shown.emit()
                elif isinstance(event, Finished):
                    self.session.add(event.metrics)
                    self._show_spending()
                    self.long_jobs.finished(
                        self.tr("Your answer is ready: {question}").format(question=question),
                        event.metrics.total_s,
                    )
                elif isinstance(event, Failed):
                    self._keep_question(question)
        except Exception as error:  # the model would not load, the library failed: say so
            self.turns.apply(Failed(str(error), None))
            self.statusBar().showMessage(self.tr("The answer failed: {error}").format(error=error))
            self._keep_question(question)
        finally:
            # A crash may have put the local model on safe settings: said once, in words.
            self._tell_model_notice(self.docent.chat.take_notice())
            if self._cancel is cancel:  # not when a question asked since runs
                self.composer.set_answering(False)
            self.answer_finished.emit()

    def _show_spending(self) -> None:
        """The month's cloud spending, in the newest answer's details, once a cloud exists."""
        if self.turns.current is not None and self.docent.cloud is not None:
            self.turns.current.badge.spending = self.docent.desk.budget.describe()

    def _keep_question(self, question: str) -> None:
        """A failed question goes back into an empty question box: Enter asks it again."""
        if not self.question.toPlainText().strip():
            self.question.setPlainText(question)
