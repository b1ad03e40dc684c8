"""The first-run screen: three short blocks (private by default, drop your documents, the cloud
is optional), how fast this computer runs the local model (a busy bar while it is measured,
then one sentence), and the details folded away: the model, its licence, and the folders Docent
writes to, each with an "Open folder" button. Shown once, beside the window (never modal);
Start closes it, "Set up a cloud model…" opens Settings where a provider is added."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.catalog import ModelError
from app.llm.speed import switch_due
from ui import keys
from ui.looks import MutedLabel, link_button
from ui.plain import plain_label

WIDTH = 560
_ICON = QSize(32, 32)


class FirstRunDialog(QDialog):
    """Signals: settings_requested() — "Set up a cloud model…" was clicked; guide_shown() —
    the guide is in the library, and the screen says so."""

    settings_requested = Signal()
    guide_shown = Signal()

    def __init__(self, docent: Docent, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.docent = docent
        self.setWindowTitle(self.tr("Welcome to Docent"))
        title = QLabel(self.tr("Welcome to Docent"))
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        title.setFont(font)
        style = self.style()
        blocks = QGridLayout()
        blocks.setHorizontalSpacing(16)
        blocks.setVerticalSpacing(12)
        for row, (icon, heading, text) in enumerate(
            (
                (
                    QStyle.StandardPixmap.SP_DriveHDIcon,
                    self.tr("Private by default"),
                    self.tr(
                        "Docent reads your documents and answers on this computer, with the "
                        "model it comes with: no account, no download. Nothing leaves this "
                        "computer unless you set up a cloud model."
                    ),
                ),
                (
                    QStyle.StandardPixmap.SP_FileIcon,
                    self.tr("Drop your documents"),
                    self.tr(
                        "PDFs, e-books, Word, Excel and PowerPoint files, scans, web pages, "
                        "Markdown or text: drop them on the window or press {key}. Every "
                        "answer shows the pages it used."
                    ).format(key=keys.native(keys.ADD_DOCUMENTS)),
                ),
                (
                    QStyle.StandardPixmap.SP_DriveNetIcon,
                    self.tr("Cloud is optional"),
                    self.tr(
                        "For hard questions you can add a cloud model (OpenAI, OpenRouter, "
                        "DeepSeek, your team's server…). You decide when a question may leave "
                        "this computer; its key stays in the system keychain."
                    ),
                ),
            )
        ):
            picture = QLabel()
            picture.setPixmap(style.standardIcon(icon).pixmap(_ICON))
            picture.setAlignment(Qt.AlignmentFlag.AlignTop)
            heading_label = QLabel(heading)
            bold = heading_label.font()
            bold.setBold(True)
            heading_label.setFont(bold)
            words = QLabel(text)
            words.setWordWrap(True)
            block = QVBoxLayout()
            block.setSpacing(2)
            block.addWidget(heading_label)
            block.addWidget(words)
            blocks.addWidget(picture, row, 0)
            blocks.addLayout(block, row, 1)
        blocks.setColumnStretch(1, 1)

        speed_title = QLabel(self.tr("This computer"))
        speed_title.setFont(bold)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # busy: no percentage to give
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(8)
        self.busy.setAccessibleName(self.tr("Measuring this computer's speed"))
        # Filled in by the window once the speed check has run (after the guide is indexed).
        self.speed = plain_label(
            self.tr("Measuring how fast this computer runs the local model (a few seconds)…")
        )
        self.speed.setWordWrap(True)
        # Said here, not in the banner that follows what the user adds: Docent adds the guide.
        self.guide = MutedLabel(self.tr("A short guide is being added to your library…"))
        self.guide.setWordWrap(True)

        self.details_button = QToolButton()
        self.details_button.setText(self.tr("Details"))
        self.details_button.setCheckable(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.setAutoRaise(True)
        self.details_button.setAccessibleName(self.tr("Show or hide the details"))
        self.details_button.toggled.connect(self._show_details)
        self.details = QWidget()
        self.details.hide()
        self._fill_details()

        self.cloud_button = link_button(self.tr("Set up a cloud model…"))
        self.cloud_button.clicked.connect(self.settings_requested)
        self.cloud_button.clicked.connect(self.accept)
        self.start_button = QPushButton(self.tr("Start"))
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cloud_button)
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)

        self._layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 16)
        layout.setSpacing(8)
        layout.addWidget(title)
        layout.addSpacing(8)
        layout.addLayout(blocks)
        layout.addSpacing(8)
        layout.addWidget(speed_title)
        layout.addWidget(self.busy)
        layout.addWidget(self.speed)
        layout.addWidget(self.guide)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.details)
        layout.addSpacing(8)
        layout.addLayout(buttons)
        self.start_button.setFocus()
        self._fit()

    def _fill_details(self) -> None:
        chat, embedder = (self.docent.catalog.default(r) for r in ("chat", "embedding"))
        model = plain_label(
            self.tr(
                "Local model: {title}, {size} MB, licence {licence}. It runs on the processor. "
                "Larger models, for a computer with a graphics card, are in Models…"
            ).format(title=chat.title, size=f"{chat.size / 1e6:,.0f}", licence=chat.licence)
            + "\n"
            + self.tr("Search: {title}.").format(title=embedder.title)
        )
        model.setWordWrap(True)
        self.speed_details = MutedLabel()
        self.speed_details.setWordWrap(True)
        self.speed_details.hide()
        paths = self.docent.paths
        folders = QGridLayout()
        self.folder_buttons: dict[str, QPushButton] = {}
        for row, (what, folder) in enumerate(
            (
                (self.tr("Your library and history"), paths.database.parent),
                (self.tr("Settings"), paths.settings_file.parent),
                (self.tr("Models"), paths.models_dir),
            )
        ):
            button = QPushButton(self.tr("Open folder"))
            button.setToolTip(str(folder))  # the path on demand, not in the text
            button.setAccessibleName(self.tr("Open the folder: {what}").format(what=what))
            button.clicked.connect(lambda _=False, f=folder: _open_folder(f))
            folders.addWidget(QLabel(what), row, 0)
            folders.addWidget(button, row, 1)
            self.folder_buttons[what] = button
        folders.setColumnStretch(0, 1)
        note = MutedLabel(self.tr("Docent writes nowhere else."))
        layout = QVBoxLayout(self.details)
        layout.setContentsMargins(20, 0, 0, 0)
        layout.addWidget(model)
        layout.addWidget(self.speed_details)
        layout.addLayout(folders)
        layout.addWidget(note)

    def show_speed(self, failure: str | None = None) -> None:
        """The speed check's result in one sentence (its numbers in the details), or why it
        could not measure."""
        self.busy.hide()
        if failure is not None:
            self.speed.setText(
                self.tr("Docent could not measure this computer's speed: {why}").format(why=failure)
            )
            return
        self.speed.setText(self._speed_sentence())
        self.speed_details.setText(self.docent.describe_speed())
        self.speed_details.show()
        self._fit()

    def show_guide_ready(self) -> None:
        """The guide is indexed: its questions are offered in the window."""
        self.guide.setText(
            self.tr("The guide is in your library: try the questions the window offers.")
        )
        self._fit()
        self.guide_shown.emit()

    def _speed_sentence(self) -> str:
        check = self.docent.settings.speed_check
        speed = self.docent.local_speed()
        chat_model = self.docent.settings.local.chat_model
        if check is None or speed is None:
            return self.tr("Not measured yet.")
        if switch_due(check, chat_model):
            return self.tr(
                "This computer is fast enough for {model}, which answers better: Docent "
                "switches to it once it is ready."
            ).format(model=self._short(check.chosen))
        return self.tr("On this computer, {model} starts answering in about {seconds} s.").format(
            model=self._short(chat_model),
            seconds=f"{check.prompt_tokens / speed.prefill_tok_s:.0f}",
        )

    def _short(self, model: str) -> str:
        try:
            return self.docent.catalog.get(model).short_title
        except ModelError:  # the user's own GGUF file
            return Path(model).stem

    def _show_details(self, shown: bool) -> None:
        self.details.setVisible(shown)
        self.details_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        self._fit()

    def _fit(self) -> None:
        """As tall as its content at WIDTH: no blank band above the buttons."""
        self._layout.activate()
        self.resize(WIDTH, self._layout.totalHeightForWidth(WIDTH))


def _open_folder(folder: Path) -> None:
    """In the file manager (Docent made these folders at start-up: Paths.create)."""
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
