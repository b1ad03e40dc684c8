"""The cloud half of the settings: OpenAI-compatible providers, MCP servers and their keys.

Each list edits plain dicts shaped like the settings schema, so validation stays in one place
(`app.settings`). Keys typed here go to the keychain when the dialog is saved; a stored key is
only ever shown masked.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.secrets import SecretStore, masked
from ui.plain import plain_label
from ui.settings.model_checklist import ModelChecklist
from ui.theme import error_style


@dataclass(frozen=True)
class Field:
    """One form row. kinds: text, list (comma-separated), args (shell words), env (NAME=value
    lines), headers (Name: value lines), choice, key (the keychain-held secret), models (a
    checklist the provider's own list fills)."""

    name: str
    label: object  # marked for translation in the form's context, worded where shown
    kind: str = "text"
    choices: tuple[str, ...] = ()


PROVIDER_FIELDS = (
    Field("name", QT_TRANSLATE_NOOP("EntryList", "Name")),
    Field("base_url", QT_TRANSLATE_NOOP("EntryList", "Base URL (OpenAI-compatible, …/v1)")),
    Field("key", QT_TRANSLATE_NOOP("EntryList", "API key"), "key"),
    Field("models", QT_TRANSLATE_NOOP("EntryList", "Models"), "models"),
)
SERVER_FIELDS = (
    Field("name", QT_TRANSLATE_NOOP("EntryList", "Name")),
    Field(
        "transport",
        QT_TRANSLATE_NOOP("EntryList", "Transport"),
        "choice",
        ("stdio", "streamable-http", "sse"),
    ),
    Field("command", QT_TRANSLATE_NOOP("EntryList", "Command (stdio)")),
    Field("args", QT_TRANSLATE_NOOP("EntryList", "Arguments (stdio)"), "args"),
    Field("env", QT_TRANSLATE_NOOP("EntryList", "Environment (stdio, NAME=value per line)"), "env"),
    Field("url", QT_TRANSLATE_NOOP("EntryList", "URL (HTTP transports)")),
    Field("headers", QT_TRANSLATE_NOOP("EntryList", "Headers (Name: value per line)"), "headers"),
    Field(
        "key",
        QT_TRANSLATE_NOOP("EntryList", "Key (bearer token, or the value of the key variable)"),
        "key",
    ),
    Field("key_env", QT_TRANSLATE_NOOP("EntryList", "Key variable (stdio)")),
    Field("chat_tool", QT_TRANSLATE_NOOP("EntryList", "Chat tool")),
    Field(
        "footer_line",
        QT_TRANSLATE_NOOP("EntryList", "Line before the server's own notes in its answer"),
    ),
    # auto: learnt from the first answer (does the tool's result extend the messages' text?)
    Field(
        "progress",
        QT_TRANSLATE_NOOP("EntryList", "Progress messages carry"),
        "choice",
        ("auto", "text", "status"),
    ),
    Field(
        "arguments",
        QT_TRANSLATE_NOOP("EntryList", "Tool arguments (role=argument per line)"),
        "env",
    ),
    Field("models", QT_TRANSLATE_NOOP("EntryList", "Models (comma-separated)"), "list"),
)


def _pairs_to_text(pairs: dict[str, str], separator: str) -> str:
    return "\n".join(f"{name}{separator}{value}" for name, value in pairs.items())


def _text_to_pairs(text: str, separator: str) -> dict[str, str]:
    pairs = {}
    for line in text.splitlines():
        if line.strip():
            name, _, value = line.partition(separator)
            pairs[name.strip()] = value.strip()
    return pairs


@dataclass
class Entry:
    """A provider or server being edited, and what happens to its key on save."""

    values: dict[str, Any]
    stored_as: str | None = None  # the name its key is stored under, if it has one
    stored_key: str | None = None
    new_key: str = ""


class EntryList(QWidget):
    """A list of named entries beside a form for the selected one."""

    def __init__(self, title: str, fields: tuple[Field, ...], template: dict[str, Any]) -> None:
        super().__init__()
        self.fields = fields
        self.template = template
        self.entries: list[Entry] = []
        self.removed: list[Entry] = []
        self.current = -1
        self.names = QListWidget()
        self.names.currentRowChanged.connect(self._select)
        self.names.setAccessibleName(title)
        self.add_button, remove = QPushButton(self.tr("Add")), QPushButton(self.tr("Remove"))
        self.add_button.clicked.connect(lambda: self.add())
        remove.clicked.connect(self.remove_current)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(remove)
        left = QVBoxLayout()
        left.addWidget(QLabel(f"<b>{title}</b>"))
        left.addWidget(self.names, 1)
        left.addLayout(buttons)
        self.form = QFormLayout()
        self.widgets: dict[str, QLineEdit | QPlainTextEdit | QComboBox | ModelChecklist] = {}
        for field in fields:
            widget = self._widget_for(field)
            self.widgets[field.name] = widget
            self.form.addRow(self.tr(str(field.label)), widget)
        name = self.widgets["name"]
        assert isinstance(name, QLineEdit)
        name.textChanged.connect(self._rename_current)
        self.error = plain_label()  # errors quote what was typed
        self.error.setStyleSheet(error_style(self.palette()))
        self.error.setWordWrap(True)
        self.error.hide()
        self.form.addRow(self.error)
        self.test_button = QPushButton(self.tr("Test connection"))
        self.test_result = plain_label()  # a server's own error text
        self.test_result.setWordWrap(True)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        self.form.addRow(test_row)
        self.editor = QWidget()
        self.editor.setLayout(self.form)
        lists = QHBoxLayout()
        lists.addLayout(left, 1)
        lists.addWidget(self.editor, 3)
        self.editor.setEnabled(False)
        self.footer = QVBoxLayout(self)  # what the page adds below: the keychain notice
        self.footer.addLayout(lists, 1)

    @staticmethod
    def _widget_for(field: Field) -> QLineEdit | QPlainTextEdit | QComboBox | ModelChecklist:
        if field.kind == "models":
            return ModelChecklist()
        if field.kind == "choice":
            combo = QComboBox()
            combo.addItems(field.choices)
            return combo
        if field.kind in ("env", "headers"):
            text = QPlainTextEdit()
            text.setFixedHeight(84 if field.name == "arguments" else 56)
            return text
        line = QLineEdit()
        if field.kind == "key":
            line.setEchoMode(QLineEdit.EchoMode.Password)
        return line

    def _rename_current(self, name: str) -> None:
        if (item := self.names.currentItem()) is not None:
            item.setText(name)
        if isinstance(models := self.widgets.get("models"), ModelChecklist):
            models.set_provider(name.strip())  # its prices are listed under its name

    def load(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.names.clear()
        self.names.addItems([entry.values["name"] for entry in entries])
        self.names.setCurrentRow(0 if entries else -1)

    def add(self, values: dict[str, Any] | None = None) -> None:
        """A new entry from the template, or from `values` (a preset); its name made unique."""
        self._commit()
        values = dict(self.template, **(values or {}))
        taken = {entry.values["name"] for entry in self.entries}
        stem = values["name"]  # a preset's; the template's is empty: new-1, new-2, …
        number = 1 if stem else len(self.entries) + 1
        name = stem or f"new-{number}"
        while name in taken:  # a second openrouter: openrouter-2
            number += 1
            name = f"{stem or 'new'}-{number}"
        self.entries.append(Entry(dict(values, name=name)))
        self.names.addItem(name)
        self.names.setCurrentRow(len(self.entries) - 1)

    def remove_current(self) -> None:
        row = self.names.currentRow()
        if row < 0:
            return
        self.current = -1  # the form's contents belong to the removed entry: do not commit them
        self.removed.append(self.entries.pop(row))
        self.names.takeItem(row)
        self._select(self.names.currentRow())

    def selected(self) -> Entry | None:
        """The entry the form shows, with the form's latest values."""
        self._commit()
        return self.entries[self.current] if 0 <= self.current < len(self.entries) else None

    def _select(self, row: int) -> None:
        self._commit()
        self.test_result.clear()
        self.current = row
        self.editor.setEnabled(row >= 0)
        entry = self.entries[row] if row >= 0 else Entry(dict(self.template, name=""))
        for field in self.fields:
            self._show_value(field, entry)

    def refresh(self) -> None:
        """Show the selected entry again (its stored key may have been found meanwhile)."""
        self._select(self.names.currentRow())

    def _show_value(self, field: Field, entry: Entry) -> None:
        widget = self.widgets[field.name]
        value = entry.values.get(field.name)
        if isinstance(widget, ModelChecklist):
            widget.set_provider(entry.values.get("name", ""))
            widget.set_models(list(value or []))
        elif isinstance(widget, QComboBox):
            widget.setCurrentText(str(value))
        elif isinstance(widget, QPlainTextEdit):
            widget.setPlainText(_pairs_to_text(value or {}, "=" if field.kind == "env" else ": "))
        elif field.kind == "key":
            widget.setText(entry.new_key)
            stored = (
                self.tr("stored: {key}").format(key=masked(entry.stored_key))
                if entry.stored_key
                else self.tr("no key stored")
            )
            widget.setPlaceholderText(self.tr("{stored} — type to replace").format(stored=stored))
        elif field.kind == "list":
            widget.setText(", ".join(value or []))
        elif field.kind == "args":
            widget.setText(shlex.join(value or []))
        else:
            widget.setText(str(value or ""))

    def _commit(self) -> None:
        """Copy the form into the entry it shows."""
        if not 0 <= self.current < len(self.entries):
            return
        entry = self.entries[self.current]
        for field in self.fields:
            widget = self.widgets[field.name]
            if isinstance(widget, ModelChecklist):
                entry.values[field.name] = widget.ticked()
            elif isinstance(widget, QComboBox):
                entry.values[field.name] = widget.currentText()
            elif isinstance(widget, QPlainTextEdit):
                separator = "=" if field.kind == "env" else ":"
                entry.values[field.name] = _text_to_pairs(widget.toPlainText(), separator)
            elif field.kind == "key":
                entry.new_key = widget.text().strip()
            elif field.kind == "list":
                entry.values[field.name] = [
                    part.strip() for part in widget.text().split(",") if part.strip()
                ]
            elif field.kind == "args":
                try:
                    entry.values[field.name] = shlex.split(widget.text())
                except ValueError:  # an unclosed quote: keep the words as typed
                    entry.values[field.name] = widget.text().split()
            else:
                entry.values[field.name] = widget.text().strip()
        self.names.item(self.current).setText(entry.values["name"])

    def values(self) -> list[dict[str, Any]]:
        self._commit()
        return [dict(entry.values) for entry in self.entries]

    def show_error(self, index: int, message: str) -> None:
        if 0 <= index < len(self.entries):
            self.names.setCurrentRow(index)
        self.error.setText(message)
        self.error.show()

    def clear_error(self) -> None:
        self.error.hide()


class KeychainNotice(QWidget):
    """Where keys are kept (the OS keychain, or why there is none), and the consent to a
    plain-text key file where there is none: on the pages whose entries hold keys.

    Signals: consent_changed(bool) — the box was ticked or unticked here."""

    consent_changed = Signal(bool)

    def __init__(self, consent: bool) -> None:
        super().__init__()
        self.text = plain_label(self.tr("Looking for the keychain…"))
        self.text.setWordWrap(True)
        self.consent = QCheckBox(
            self.tr("Keep keys in a plain-text file that only my user can read (NOT encrypted)")
        )
        self.consent.setChecked(consent)
        self.consent.hide()
        self.consent.toggled.connect(self.consent_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)
        layout.addWidget(self.consent)

    def show_store(self, store: SecretStore) -> None:
        self.text.setText(store.describe())
        self.consent.setVisible(not store.available or store.is_plaintext)
