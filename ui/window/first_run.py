"""The first-run screen: what Docent does, the model it comes with, how fast this computer runs
it (and so which local model answers), where its files live and how to add a cloud provider.
Shown once, beside the window (never modal); Skip or Start both close it."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.bootstrap import Docent
from ui.plain import plain_label


def welcome_text(docent: Docent) -> str:
    chat, embedder = docent.catalog.default("chat"), docent.catalog.default("embedding")
    paths = docent.paths
    return f"""
<h2>Welcome to Docent</h2>
<p><b>Ask your documents.</b> Drop PDFs, e-books, Markdown, HTML or text files on the window (or
press Ctrl+O), then ask a question: the answer streams in and cites the pages it used. Simple
questions are answered on this computer; your documents never leave it unless you add a cloud
provider and allow it.</p>
<p><b>The model that comes with Docent:</b> {escape(chat.title)}, {chat.size / 1e6:,.0f} MB,
{escape(chat.licence)}. It runs on the CPU, with no download and no account. For better answers
on a laptop with a GPU, download a larger one in <i>Docent → Models…</i>. Search uses
{escape(embedder.title)}.</p>
<p><b>Where your data lives</b> (nothing is written anywhere else):<br>
library and history: <code>{escape(str(paths.database))}</code><br>
settings: <code>{escape(str(paths.settings_file))}</code><br>
models: <code>{escape(str(paths.models_dir))}</code></p>
<p><b>Adding a cloud provider</b> for hard questions: <i>Settings (Ctrl+,) → Cloud providers</i>,
with a name, the base URL (OpenAI, OpenRouter, DeepSeek, a team's server…) and a key, which is
kept in the system keychain. <i>Routing &amp; privacy</i> decides when a question may leave this
computer and what it may take along.</p>
<p>A short guide is being added to your library, so there is something to ask right away.</p>
"""


class FirstRunDialog(QDialog):
    """Signals: settings_requested() — "Add a cloud provider…" was clicked."""

    settings_requested = Signal()

    def __init__(self, docent: Docent, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Docent")
        self.text = QLabel(welcome_text(docent))
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Filled in by the window once the speed check has run (after the guide is indexed).
        self.speed = plain_label(
            "Measuring how fast this computer runs the local model (a few seconds)…"
        )
        self.speed.setWordWrap(True)
        self.speed.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox()
        self.cloud_button = QPushButton("Add a cloud provider…")
        self.skip_button = buttons.addButton("Skip", QDialogButtonBox.ButtonRole.RejectRole)
        self.start_button = buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.cloud_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.cloud_button.clicked.connect(self.settings_requested)
        self.cloud_button.clicked.connect(self.accept)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(QLabel("<b>This computer and the local model</b>"))
        layout.addWidget(self.speed)
        layout.addStretch()  # the text reads from the top; spare height goes above the buttons
        layout.addWidget(buttons)
        self.resize(640, 640)
