"""Models…: the catalog's chat models with how many questions each answered right and how fast
it would run here, their downloads (progress, pause, resume, verified), the switch that makes one
the local model without restarting Docent, and the model recommended for this computer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.catalog import CatalogModel
from app.downloads import DownloadProgress, download, is_downloaded, partial_bytes
from app.errors import DocentError
from app.llm.speed import Recommendation, predicted_here, recommend, ttft_s
from ui.background import Background
from ui.plain import plain_label, plain_tooltip
from ui.theme import error_style

# The state right after the name: in Settings' narrower page only the licence may scroll away.
NAME, STATE, SIZE, RAM, RIGHT, HERE, LICENCE = range(7)


def _gb(size: int) -> str:
    return f"{size / 1e9:.2f} GB"


def _percent(share: float) -> str:
    return f"{share * 100:.0f} %"


class ModelManager(QDialog):
    """Signals: changed() — after a download's progress, pause or outcome, or a switch (tests
    and the window wait on it); switched(str) — after the app answers with another model."""

    changed = Signal()
    switched = Signal(str)

    def __init__(
        self, docent: Docent, parent: QWidget | None = None, *, embedded: bool = False
    ) -> None:
        """`embedded`: a part of another window (Settings → Local model), not a window."""
        super().__init__(parent)
        if embedded:
            self.setWindowFlags(Qt.WindowType.Widget)
        self.docent = docent
        self.background = Background(
            lambda error: self._say(self.tr("Failed: {error}").format(error=error), error=True)
        )
        self.setWindowTitle(self.tr("Models — Docent"))
        self.models = [m for m in docent.catalog.models if m.role == "chat"]
        self.table = QTreeWidget()
        self.table.setHeaderLabels(
            [
                self.tr("Model"),
                self.tr("State"),
                self.tr("Size"),
                self.tr("RAM needed"),
                self.tr("Answers right"),
                self.tr("On this computer"),
                self.tr("Licence"),
            ]
        )
        self.table.setRootIsDecorated(False)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Every column as wide as its contents: no name or state cut short.
        self.table.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.rows: dict[str, QTreeWidgetItem] = {}
        for model in self.models:
            item = QTreeWidgetItem()
            for column, text in (
                (NAME, model.title),
                (SIZE, _gb(model.size)),
                (RAM, f"{model.ram_gb:g} GB" if model.ram_gb else ""),
                (RIGHT, _percent(model.evaluation.right) if model.evaluation else ""),
                (LICENCE, model.licence.partition(" (")[0]),  # its name; the tooltip: whole
            ):
                item.setText(column, text)
            item.setToolTip(NAME, plain_tooltip(f"{model.name} — {model.upstream}"))
            if model.evaluation:
                item.setToolTip(
                    RIGHT,
                    plain_tooltip(
                        self.tr("Docent's evaluation: {questions}").format(
                            questions=model.evaluation.questions
                        )
                    ),
                )
            item.setToolTip(LICENCE, plain_tooltip(model.licence))
            self.table.addTopLevelItem(item)
            self.rows[model.name] = item
        self.download_button = QPushButton(self.tr("Download"))
        self.download_button.clicked.connect(self.start_download)
        self.pause_button = QPushButton(self.tr("Pause"))
        self.pause_button.clicked.connect(self.pause)
        self.use_button = QPushButton(self.tr("Use this model"))
        self.use_button.clicked.connect(lambda: self.use(self._selected_name()))
        self.recommendation: Recommendation | None = None
        self.recommended = plain_label()
        self.recommended.setWordWrap(True)
        self.recommended_button = QPushButton()
        self.recommended_button.clicked.connect(self.use_recommended)
        recommended_row = QHBoxLayout()
        recommended_row.addWidget(self.recommended, 1)
        recommended_row.addWidget(self.recommended_button)
        own = QPushButton(self.tr("Use my own GGUF file…"))
        own.clicked.connect(self._choose_own)
        buttons = QHBoxLayout()
        for button in (self.download_button, self.pause_button, self.use_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(own)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.status = plain_label()  # download errors, a chosen file's name
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_button = QPushButton(self.tr("Open models folder"))
        self.folder_button.setToolTip(
            self.tr("Where downloads go, and where your own GGUF files may live")
        )
        self.folder_button.clicked.connect(self.open_folder)
        note = QLabel(self.tr("Larger models answer better and need more memory."))
        note.setWordWrap(True)
        footer = QHBoxLayout()
        footer.addWidget(note, 1)
        footer.addWidget(self.folder_button)
        layout = QVBoxLayout(self)
        layout.addLayout(recommended_row)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(footer)
        if embedded:
            layout.setContentsMargins(0, 0, 0, 0)
        else:
            self.resize(1100, 440)
        self.downloading: tuple[str, asyncio.Task[None]] | None = None
        self.switching: asyncio.Task[None] | None = None
        self.refresh()

    # --- state -------------------------------------------------------------------------------

    def _selected_name(self) -> str:
        selected = self.table.selectedItems()
        names = [name for name, item in self.rows.items() if item in selected]
        return names[0] if names else ""

    def select(self, name: str) -> None:
        self.table.setCurrentItem(self.rows[name])

    def _model(self, name: str) -> CatalogModel:
        return self.docent.catalog.get(name)

    def available(self, model: CatalogModel) -> bool:
        if model.downloadable:
            return is_downloaded(model, self.docent.paths.models_dir)
        return model.installed

    def refresh(self) -> None:
        """Each row's state from the models folder (a stat per model), its speed predicted from the
        last speed check, and the model recommended here."""
        current, models_dir = self.docent.settings.local.chat_model, self.docent.paths.models_dir
        check = self.docent.settings.speed_check
        self.recommendation = recommend(check, self.docent.catalog, current) if check else None
        for model in self.models:
            row = self.rows[model.name]
            speed = predicted_here(check, self.docent.catalog, model) if check else None
            if check and speed:
                row.setText(
                    HERE,
                    self.tr("first words in {seconds} s, {rate} tokens/s").format(
                        seconds=f"{ttft_s(speed, check.prompt_tokens):.1f}",
                        rate=f"{speed.decode_tok_s:.1f}",
                    ),
                )
                row.setToolTip(
                    HERE,
                    plain_tooltip(
                        self.tr(
                            "Predicted from the speed check of {date}, for a question with "
                            "{tokens} tokens of sources"
                        ).format(
                            date=f"{check.measured_on:%Y-%m-%d}", tokens=f"{check.prompt_tokens:,}"
                        )
                    ),
                )
            else:
                row.setText(HERE, "")
            recommended = bool(self.recommendation and self.recommendation.model is model)
            row.setText(
                NAME,
                self.tr("{model} — recommended").format(model=model.title)
                if recommended
                else model.title,
            )
            font = row.font(NAME)
            font.setBold(recommended)
            row.setFont(NAME, font)
            if model.name == current:
                state = self.tr("in use")
            elif self.available(model):
                state = self.tr("ready")
            elif model.downloadable and (done := partial_bytes(model, models_dir)):
                state = self.tr("paused at {percent}%").format(percent=done * 100 // model.size)
            elif model.downloadable:
                state = self.tr("not downloaded")  # a state; Download is the button's
            else:
                state = (
                    f"pip install 'docent[{model.extra}]'" if model.extra else self.tr("missing")
                )
            if self.downloading and self.downloading[0] == model.name:
                state = self.tr("downloading…")
            row.setText(STATE, state)
        self._show_recommendation()
        self._update_buttons()

    def _show_recommendation(self) -> None:
        offer = self.recommendation
        self.recommended.setVisible(offer is not None)
        self.recommended_button.setVisible(offer is not None)
        if offer is None:
            return
        now = self.docent.catalog.get(self.docent.settings.local.chat_model)
        self.recommended.setText(
            self.tr(
                "Recommended for this computer: {model}, {right} of answers right vs {right_now} "
                "for {now}, first words in about {seconds} s."
            ).format(
                model=offer.model.short_title,
                right=_percent(offer.right),
                right_now=_percent(offer.right_now),
                now=now.short_title,
                seconds=f"{offer.ttft_s:.0f}",
            )
        )
        ready = self.available(offer.model)
        self.recommended_button.setText(
            self.tr("Use it") if ready else self.tr("Download and use it")
        )

    def _update_buttons(self) -> None:
        name = self._selected_name()
        model = self._model(name) if name else None
        busy = self.downloading is not None
        this_one = busy and self.downloading is not None and self.downloading[0] == name
        can_download = bool(model and model.downloadable and not self.available(model))
        self.download_button.setEnabled(can_download and not busy)
        partial = model and partial_bytes(model, self.docent.paths.models_dir)
        self.download_button.setText(self.tr("Resume") if partial else self.tr("Download"))
        self.pause_button.setEnabled(bool(this_one))
        in_use = bool(model and model.name == self.docent.settings.local.chat_model)
        switching = self.switching is not None
        self.use_button.setEnabled(
            bool(model and self.available(model) and not in_use and not switching)
        )
        self.recommended_button.setEnabled(not busy and not switching)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setStyleSheet(error_style(self.palette()) if error else "")
        self.status.setText(text)
        self.changed.emit()

    def open_folder(self) -> None:
        """In the file manager (it is made at start-up: `Paths.create`)."""
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.docent.paths.models_dir)))

    # --- downloads -----------------------------------------------------------------------------

    def start_download(self) -> asyncio.Task[None] | None:
        return self._start_download(self._selected_name(), then_use=False)

    def use_recommended(self) -> asyncio.Task[None] | None:
        """One click: use the recommended model, downloading it first when it is not here."""
        if self.recommendation is None:
            return None
        model = self.recommendation.model
        if self.available(model):
            return self.use(model.name)
        self.select(model.name)
        return self._start_download(model.name, then_use=True)

    def _start_download(self, name: str, *, then_use: bool) -> asyncio.Task[None] | None:
        if not name or self.downloading is not None:
            return None
        task = self.background.run(self._download(self._model(name), then_use=then_use))
        self.downloading = (name, task)
        self.progress.setValue(0)
        self.progress.show()
        self.refresh()
        return task

    def pause(self) -> None:
        if self.downloading is not None:
            self.downloading[1].cancel()

    async def _download(self, model: CatalogModel, *, then_use: bool) -> None:
        self._say(self.tr("Connecting to {url}…").format(url=model.url))
        try:
            await download(model, self.docent.paths.models_dir, self._show_progress)
        except asyncio.CancelledError:
            self._say(
                self.tr("{model}: paused. Resume continues where it stopped.").format(
                    model=model.title
                )
            )
        except DocentError as error:
            self._say(str(error), error=True)
        else:
            if then_use:
                self.use(model.name)
            else:
                self._say(
                    self.tr(
                        "{model} is downloaded and verified (sha256). Use it when you like."
                    ).format(model=model.title)
                )
        finally:
            self.downloading = None
            self.progress.hide()
            self.refresh()
            self.changed.emit()

    def _show_progress(self, progress: DownloadProgress) -> None:
        self.progress.setValue(progress.done * 1000 // max(progress.total, 1))
        done, total = progress.done / 1e6, progress.total / 1e6
        if progress.verifying:
            text = self.tr("Checking the {done} MB downloaded earlier before resuming…").format(
                done=f"{done:,.0f}"
            )
        elif progress.elsewhere:  # another window or `docent models` downloads it now
            text = self.tr(
                "Another Docent window or command is downloading it: {done} of {total} MB…"
            ).format(done=f"{done:,.0f}", total=f"{total:,.0f}")
        else:
            rate = progress.bytes_per_s
            left = (progress.total - progress.done) / rate if rate else 0
            text = self.tr("{done} of {total} MB · {rate} MB/s · {left} s left").format(
                done=f"{done:,.0f}",
                total=f"{total:,.0f}",
                rate=f"{rate / 1e6:,.1f}",
                left=f"{left:,.0f}",
            )
        self._say(text)

    # --- switching -----------------------------------------------------------------------------

    def _choose_own(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, self.tr("Your own model"), "", self.tr("GGUF models (*.gguf)")
        )
        if name:
            self.use(str(Path(name)))

    def use(self, choice: str) -> asyncio.Task[None] | None:
        """Make `choice` (a catalog name or a GGUF path) the local model, without a restart."""
        if not choice or self.switching is not None:
            return None
        self.switching = self.background.run(self._use(choice))
        return self.switching

    async def _use(self, choice: str) -> None:
        self._update_buttons()
        self._say(self.tr("Loading {model}…").format(model=choice))
        try:
            await self.docent.use_chat_model(choice)
        except DocentError as error:
            self._say(
                self.tr("Cannot use {model}: {error}").format(model=choice, error=error), error=True
            )
        else:
            self._say(self.tr("Docent now answers with {model}.").format(model=choice))
            self.switched.emit(choice)
        finally:
            self.switching = None
            self.refresh()

    async def close_async(self) -> None:
        """Pause a download in flight (it resumes next time) and close."""
        await self.background.close()
        self.close()

    def reject(self) -> None:
        self.pause()  # the part is kept; closing never leaves a download running unseen
        super().reject()
