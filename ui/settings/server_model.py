"""Settings → Local model → "On a server you run": the local route answers with a model on an
OpenAI-compatible server (llama.cpp's server, vLLM, Ollama, LM Studio) instead of on this
computer, as privately and for free; the model on this computer answers when the server cannot.
The key, if the server wants one, goes to the keychain with the cloud keys."""

from __future__ import annotations

import asyncio
import importlib
from functools import partial
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QPushButton,
)

from app.cloud.presets import PRESETS
from app.secrets import masked
from app.settings import ModelServerSettings
from ui.background import Background
from ui.plain import plain_label


class ServerModelBox(QGroupBox):
    """Ticked, the local route runs on the server it names. `values()` is its settings
    section; `new_key` the key typed here (None: keep the one in the keychain)."""

    def __init__(self, settings: ModelServerSettings, background: Background) -> None:
        super().__init__()
        self.setTitle(self.tr("Answer with a model on a server you run"))
        self.setCheckable(True)
        self.setChecked(settings.enabled)
        self._settings = settings
        self._background = background
        self.stored_key: str | None = None
        self.fetching: asyncio.Task[None] | None = None
        self.base_url = QLineEdit(settings.base_url)
        self.base_url.setPlaceholderText(self.tr("for example http://192.168.1.5:8080/v1"))
        self.base_url.setAccessibleName(self.tr("Server address"))
        self.presets = QPushButton(self.tr("Presets"))
        self.presets.setToolTip(self.tr("The usual address of a model server on this computer"))
        menu = QMenu(self.presets)
        for preset in PRESETS:
            if preset.local:  # the same servers Cloud providers offers, as the local route
                menu.addAction(preset.title, partial(self.base_url.setText, preset.base_url))
        self.presets.setMenu(menu)
        url_row = QHBoxLayout()
        url_row.addWidget(self.base_url, 1)
        url_row.addWidget(self.presets)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setEditText(settings.model)
        self.model.setAccessibleName(self.tr("Model on the server"))
        self.fetch_button = QPushButton(self.tr("Fetch models"))
        self.fetch_button.setToolTip(self.tr("Ask the server which models it serves"))
        self.fetch_button.clicked.connect(self.fetch_models)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.fetch_button)
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(self.tr("None (most servers on your network need none)"))
        self.key.setAccessibleName(self.tr("Server key"))
        self.status = plain_label()  # the server's own words, or what it serves
        self.status.setWordWrap(True)
        self.status.hide()
        note = plain_label(
            self.tr(
                "Private as this computer is: questions never count as cloud, whatever the "
                "privacy setting, and cost nothing. When the server does not answer, the model "
                "on this computer does, and the answer says why."
            )
        )
        note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow(self.tr("Server address"), url_row)
        form.addRow(self.tr("Model"), model_row)
        form.addRow(self.tr("Key"), self.key)
        form.addRow("", self.status)
        form.addRow("", note)

    @property
    def new_key(self) -> str | None:
        return self.key.text().strip() or None

    def show_stored_key(self, key: str | None) -> None:
        """The key the keychain holds, shown masked (never the key itself)."""
        self.stored_key = key
        if key:
            self.key.setPlaceholderText(
                self.tr("Kept in the keychain: {key}").format(key=masked(key))
            )

    def values(self) -> dict[str, Any]:
        return self._settings.model_dump() | {
            "enabled": self.isChecked(),
            "base_url": self.base_url.text().strip(),
            "model": self.model.currentText().strip(),
        }

    def fetch_models(self) -> asyncio.Task[None] | None:
        """Ask the server which models it serves (GET …/models), to pick from."""
        if self.fetching is not None:
            return None
        self.fetching = self._background.run(self._fetch())
        return self.fetching

    async def _fetch(self) -> None:
        url = self.base_url.text().strip()
        self.fetch_button.setEnabled(False)
        self._say(self.tr("Asking {url} for its models…").format(url=url))
        try:
            # The MCP SDK loads with the probe, off the GUI thread: it would slow every start-up.
            probes = await asyncio.to_thread(importlib.import_module, "app.cloud.probe")
            listing = await probes.list_models(url, self.new_key or self.stored_key)
        finally:
            self.fetch_button.setEnabled(True)
            self.fetching = None
        if listing.error:
            self._say(self.tr("Could not fetch the models: {error}.").format(error=listing.error))
            return
        served: tuple[str, ...] = listing.models or ()
        typed = self.model.currentText().strip()
        self.model.clear()
        self.model.addItems(served)
        self.model.setEditText(typed if typed else served[0] if served else "")
        self._say(
            self.tr("Models it serves: {count}. Pick the one to answer with.").format(
                count=len(served)
            )
            if served
            else self.tr("It answers, but does not list its models: type the model's name.")
        )

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.show()
