"""The cloud half of the settings: OpenAI-compatible providers, MCP servers and their keys.

Each list edits plain dicts shaped like the settings schema, so validation stays in one place
(`app.settings`). Keys typed here go to the keychain when the dialog is saved; a stored key is
only ever shown masked.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import (
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

from app.secrets import masked
from ui.plain import plain_label
from ui.theme import error_style


@dataclass(frozen=True)
class Field:
    """One form row. kinds: text, list (comma-separated), args (shell words), env (NAME=value
    lines), headers (Name: value lines), choice, key (the keychain-held secret)."""

    name: str
    label: str
    kind: str = "text"
    choices: tuple[str, ...] = ()


PROVIDER_FIELDS = (
    Field("name", "Name"),
    Field("base_url", "Base URL (OpenAI-compatible, …/v1)"),
    Field("models", "Models (comma-separated)", "list"),
    Field("key", "API key", "key"),
)
SERVER_FIELDS = (
    Field("name", "Name"),
    Field("transport", "Transport", "choice", ("stdio", "streamable-http", "sse")),
    Field("command", "Command (stdio)"),
    Field("args", "Arguments (stdio)", "args"),
    Field("env", "Environment (stdio, NAME=value per line)", "env"),
    Field("url", "URL (HTTP transports)"),
    Field("headers", "Headers (Name: value per line)", "headers"),
    Field("key", "Key (bearer token, or the value of the key variable)", "key"),
    Field("key_env", "Key variable (stdio)"),
    Field("chat_tool", "Chat tool"),
    Field("footer_line", "Line before the server's own notes in its answer"),
    # auto: learnt from the first answer (does the tool's result extend the messages' text?)
    Field("progress", "Progress messages carry", "choice", ("auto", "text", "status")),
    Field("arguments", "Tool arguments (role=argument per line)", "env"),
    Field("models", "Models (comma-separated)", "list"),
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
        add, remove = QPushButton("Add"), QPushButton("Remove")
        add.clicked.connect(self.add)
        remove.clicked.connect(self.remove_current)
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        left = QVBoxLayout()
        left.addWidget(QLabel(f"<b>{title}</b>"))
        left.addWidget(self.names, 1)
        left.addLayout(buttons)
        self.form = QFormLayout()
        self.widgets: dict[str, QLineEdit | QPlainTextEdit | QComboBox] = {}
        for field in fields:
            widget = self._widget_for(field)
            self.widgets[field.name] = widget
            self.form.addRow(field.label, widget)
        name = self.widgets["name"]
        assert isinstance(name, QLineEdit)
        name.textChanged.connect(self._rename_current)
        self.error = plain_label()  # errors quote what was typed
        self.error.setStyleSheet(error_style(self.palette()))
        self.error.setWordWrap(True)
        self.error.hide()
        self.form.addRow(self.error)
        self.test_button = QPushButton("Test connection")
        self.test_result = plain_label()  # a server's own error text
        self.test_result.setWordWrap(True)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        self.form.addRow(test_row)
        self.editor = QWidget()
        self.editor.setLayout(self.form)
        layout = QHBoxLayout(self)
        layout.addLayout(left, 1)
        layout.addWidget(self.editor, 3)
        self.editor.setEnabled(False)

    @staticmethod
    def _widget_for(field: Field) -> QLineEdit | QPlainTextEdit | QComboBox:
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

    def load(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.names.clear()
        self.names.addItems([entry.values["name"] for entry in entries])
        self.names.setCurrentRow(0 if entries else -1)

    def add(self) -> None:
        self._commit()
        taken = {entry.values["name"] for entry in self.entries}
        number = len(self.entries) + 1
        while f"new-{number}" in taken:
            number += 1
        self.entries.append(Entry(dict(self.template, name=f"new-{number}")))
        self.names.addItem(f"new-{number}")
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
        if isinstance(widget, QComboBox):
            widget.setCurrentText(str(value))
        elif isinstance(widget, QPlainTextEdit):
            widget.setPlainText(_pairs_to_text(value or {}, "=" if field.kind == "env" else ": "))
        elif field.kind == "key":
            widget.setText(entry.new_key)
            stored = f"stored: {masked(entry.stored_key)}" if entry.stored_key else "no key stored"
            widget.setPlaceholderText(f"{stored} — type to replace")
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
            if isinstance(widget, QComboBox):
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
