"""Docent as an MCP server from the desktop app: run in the background on the app's own loop
(Streamable HTTP on 127.0.0.1, the settings switch), its state in the status bar, and the
configuration a user pastes into another MCP client."""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.bootstrap import Docent
from app.serving.config import client_config
from app.settings import ServeMcpSettings
from ui.plain import plain_tooltip

if TYPE_CHECKING:
    from app.serving.http import HttpService

HOST = "127.0.0.1"  # the app never serves beyond this machine: that needs `docent serve-mcp`


def local_url(port: int) -> str:
    return f"http://{HOST}:{port}/mcp"


class McpServing(QObject):
    """Starts, restarts and stops the server as the settings say; the same `Docent` answers the
    window and the MCP clients, so both see one library and share one model.

    Signals: changed() — the server started, stopped or failed to start (see `label`).
    """

    changed = Signal()

    def __init__(self, docent: Docent) -> None:
        super().__init__()
        self.docent = docent
        self.service: HttpService | None = None
        self.token: str | None = None  # what clients send (kept in the keychain)
        self.error = ""
        self.label = QLabel()
        self._applying = asyncio.Lock()  # one start or stop at a time
        self._show()

    @property
    def url(self) -> str | None:
        return self.service.url if self.service is not None else None

    async def apply(self) -> None:
        """Match the current settings: start, move to a new port, or stop."""
        wanted = self.docent.settings.serve_mcp
        async with self._applying:
            if self.service is not None and wanted.enabled and self.service.port == wanted.port:
                return
            await self._stop()
            self.error = ""
            if wanted.enabled:
                # The MCP SDK and uvicorn load on first use, off the GUI thread.
                http = await asyncio.to_thread(importlib.import_module, "app.serving.http")
                tools = await asyncio.to_thread(importlib.import_module, "app.serving.tools")
                try:
                    # Every account on this machine reaches 127.0.0.1: clients send the token.
                    secrets = await self.docent.secret_store()
                    token, _ = await asyncio.to_thread(http.bearer_token, secrets)
                    server = tools.build_server(self.docent, http.StaticBearer(token))
                    service = http.HttpService(server, HOST, wanted.port)
                    await service.start()
                except http.ServingError as error:
                    self.error = str(error)
                else:
                    self.service, self.token = service, token
            self._show()

    async def stop(self) -> None:
        async with self._applying:
            await self._stop()
            self._show()

    async def _stop(self) -> None:
        if self.service is not None:
            service, self.service = self.service, None
            await service.stop()

    def _show(self) -> None:
        if self.service is not None:
            self.label.setText(self.tr("MCP server: on"))
            self.label.setToolTip(
                plain_tooltip(
                    self.tr(
                        "Other MCP clients can use this library at {url}\n"
                        "Settings → Integrations → Serve over MCP shows the configuration to "
                        "paste into them."
                    ).format(url=self.service.url)
                )
            )
        elif self.error:
            self.label.setText(self.tr("MCP server: failed"))
            self.label.setToolTip(plain_tooltip(self.error))
        else:
            self.label.setText("")
            self.label.setToolTip("")
        self.changed.emit()


class ServingPage(QWidget):
    """The settings tab: the switch, the port, and the configuration snippets to copy."""

    def __init__(self, settings: ServeMcpSettings, token: str | None = None) -> None:
        """`token`: the bearer token the running server takes (None: not made yet)."""
        super().__init__()
        self.token = token
        self.enabled = QCheckBox(
            self.tr(
                "Serve this library to other MCP clients while Docent runs (on this machine only)"
            )
        )
        self.enabled.setChecked(settings.enabled)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(settings.port)
        self.port.setMaximumWidth(120)
        self.http_snippet = self._snippet()
        self.stdio_snippet = self._snippet()
        self.stdio_snippet.setPlainText(client_config())
        form = QFormLayout()
        form.addRow("", self.enabled)
        form.addRow(self.tr("Port on 127.0.0.1"), self.port)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        hint = QLabel(
            self.tr(
                "Paste one of these into the MCP configuration of another client (Claude "
                "Desktop, Cursor, VS Code, an agent). Tools: search_documents, read_page, "
                "list_documents, ask, summarize_document."
            )
        )
        hint.setWordWrap(True)
        layout.addWidget(hint)
        for title, snippet in (
            (self.tr("While Docent runs with the switch on (Streamable HTTP):"), self.http_snippet),
            (self.tr("Or let the client start Docent itself (stdio):"), self.stdio_snippet),
        ):
            copy = QPushButton(self.tr("Copy"))
            copy.clicked.connect(lambda _=False, s=snippet: self.copy(s))
            row = QHBoxLayout()
            row.addWidget(QLabel(title), 1)
            row.addWidget(copy)
            layout.addLayout(row)
            layout.addWidget(snippet)
        layout.addStretch(1)
        self.port.valueChanged.connect(self._show_http)
        self._show_http()

    def _snippet(self) -> QPlainTextEdit:
        view = QPlainTextEdit()
        view.setReadOnly(True)
        view.setFixedHeight(150)
        return view

    def _show_http(self) -> None:
        """Shown with the token masked (a screenshot, a shared screen): Copy copies it whole."""
        from app.secrets import masked  # the keychain's module: not loaded at the window's start

        placeholder = masked(self.token) if self.token else "(made when the server first starts)"
        self.http_snippet.setPlainText(client_config(local_url(self.port.value()), placeholder))

    def http_config(self) -> str:
        """What Copy puts on the clipboard for the HTTP server: with the real token."""
        return client_config(local_url(self.port.value()), self.token)

    def copy(self, snippet: QPlainTextEdit) -> None:
        text = self.http_config() if snippet is self.http_snippet else snippet.toPlainText()
        QGuiApplication.clipboard().setText(text)

    def values(self) -> dict[str, object]:
        return {"enabled": self.enabled.isChecked(), "port": self.port.value()}
