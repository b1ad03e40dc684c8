"""Settings for the local model and retrieval. Invalid values are refused with the reason next to
their field; valid ones are saved and applied without a restart (the model reloads on the next
question). Cloud providers and their keychain-held keys arrive with the cloud issue."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent, chat_model_config
from app.catalog import ModelError
from app.settings import Settings

# (section, field, label, minimum, maximum); 0 threads means "as many as the CPU has".
_NUMBERS = (
    ("local", "n_threads", "CPU threads (0 = all cores)", 0, 512),
    ("local", "n_ctx", "Context size (tokens)", 0, 262144),
    ("local", "n_gpu_layers", "GPU layers (-1 = all; Metal/CUDA builds)", -1, 999),
    ("local", "max_tokens", "Longest answer (tokens)", 0, 8192),
    ("retrieval", "top_k", "Passages per question", 0, 20),
    ("retrieval", "context_tokens", "Source text per prompt (tokens)", 0, 32768),
)


class SettingsDialog(QDialog):
    """Signals: applied() — after valid settings were saved and applied."""

    applied = Signal()

    def __init__(self, docent: Docent, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.docent = docent
        self.setWindowTitle("Docent settings")
        self.errors: dict[str, QLabel] = {}
        self.model = QLineEdit(docent.settings.local.chat_model)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._choose_model)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Chat model (catalog name or GGUF file)", model_row)
        form.addRow("", self._error_label("local.chat_model"))
        self.numbers: dict[str, QSpinBox] = {}
        for section, name, label, low, high in _NUMBERS:
            box = QSpinBox()
            box.setRange(low, high)
            value = getattr(getattr(docent.settings, section), name)
            box.setValue(0 if value is None else value)
            self.numbers[f"{section}.{name}"] = box
            form.addRow(label, box)
            form.addRow("", self._error_label(f"{section}.{name}"))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.submit)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.applying: asyncio.Task[bool] | None = None

    def _error_label(self, key: str) -> QLabel:
        label = QLabel()
        label.setStyleSheet("color: #c62828")
        label.setWordWrap(True)
        label.hide()
        self.errors[key] = label
        return label

    def _choose_model(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Chat model", "", "GGUF models (*.gguf)")
        if name:
            self.model.setText(name)

    def candidate(self) -> dict[str, Any]:
        raw = self.docent.settings.model_dump()
        raw["local"]["chat_model"] = self.model.text().strip()
        for key, box in self.numbers.items():
            section, name = key.split(".")
            value: int | None = box.value()
            if key == "local.n_threads" and value == 0:
                value = None
            raw[section][name] = value
        return raw

    def submit(self) -> asyncio.Task[bool]:
        self.applying = asyncio.ensure_future(self._apply(self.candidate()))
        return self.applying

    async def _apply(self, raw: dict[str, Any]) -> bool:
        for label in self.errors.values():
            label.hide()
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as error:
            for issue in error.errors():
                self._show(".".join(str(part) for part in issue["loc"]), issue["msg"])
            return False
        try:  # the model file must exist; joining a bundled one may take seconds: off the loop
            await asyncio.to_thread(
                chat_model_config,
                settings.local,
                self.docent.catalog,
                self.docent.paths.models_dir,
            )
        except ModelError as error:
            self._show("local.chat_model", str(error))
            return False
        await asyncio.to_thread(settings.save, self.docent.paths.settings_file)
        await self.docent.apply_settings(settings)
        self.applied.emit()
        self.accept()
        return True

    def _show(self, key: str, message: str) -> None:
        label = self.errors.get(key) or self.errors["local.chat_model"]
        label.setText(message)
        label.show()
