"""Settings → Library → "Shared library": the documents live in a PostgreSQL database that
several desktops use (README: Shared library on PostgreSQL). Its URL is a setting; its password
goes to the keychain, never into the settings file. The window reopens on the library chosen."""

from __future__ import annotations

import asyncio

from pydantic import ValidationError
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QLineEdit, QPushButton

from app.bootstrap import Docent
from app.index.shared import SharedLibraryError
from app.secrets import masked
from app.settings import LibrarySettings
from ui.background import Background
from ui.plain import plain_label


class SharedLibraryBox(QGroupBox):
    """Ticked, the documents are the shared library's at the URL. `value()` is the setting;
    `new_password` the password typed here (None: keep the keychain's)."""

    def __init__(self, docent: Docent, url: str, background: Background) -> None:
        super().__init__()
        self.setTitle(self.tr("Use a shared library on PostgreSQL"))
        self.setCheckable(True)
        self.setChecked(bool(url))
        self._docent = docent
        self._background = background
        self.testing: asyncio.Task[None] | None = None
        self.url = QLineEdit(url)
        self.url.setPlaceholderText(self.tr("postgresql://you@server/library"))
        self.url.setAccessibleName(self.tr("Shared library address"))
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText(self.tr("None (the server may need none)"))
        self.password.setAccessibleName(self.tr("Shared library password"))
        self.test_button = QPushButton(self.tr("Test connection"))
        self.test_button.setToolTip(
            self.tr("Connect as Docent would and say what is there; nothing is changed")
        )
        self.test_button.clicked.connect(self.test_connection)
        password_row = QHBoxLayout()
        password_row.addWidget(self.password, 1)
        password_row.addWidget(self.test_button)
        self.status = plain_label()  # the server's own words: a host, a role
        self.status.setWordWrap(True)
        self.status.hide()
        note = plain_label(
            self.tr(
                "The server keeps each document's path, title, text and vectors, never the "
                "files. Your history, conversations, spending, settings and keys stay on this "
                "computer. The window reopens on the library you choose when you press OK."
            )
        )
        note.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow(self.tr("Address"), self.url)
        form.addRow(self.tr("Password"), password_row)
        form.addRow("", self.status)
        form.addRow("", note)

    @property
    def new_password(self) -> str | None:
        return self.password.text() or None

    def value(self) -> str:
        return self.url.text().strip() if self.isChecked() else ""

    def show_stored_password(self, password: str | None) -> None:
        """The password the keychain holds for the URL, shown masked (never itself)."""
        if password:
            self.password.setPlaceholderText(
                self.tr("Kept in the keychain: {password}").format(password=masked(password))
            )

    def test_connection(self) -> asyncio.Task[None]:
        if self.testing is not None:
            self.testing.cancel()  # a new test replaces the one still running
        self.testing = self._background.run(self._test())
        return self.testing

    async def _test(self) -> None:
        url = self.url.text().strip()
        try:
            LibrarySettings(shared_url=url)
        except ValidationError as error:
            self._say(self.tr("Fix this first: {problem}").format(problem=error.errors()[0]["msg"]))
            return
        if not url:
            self._say(self.tr("Type the library's address first."))
            return
        self._say(self.tr("Connecting…"))
        try:
            facts = await self._docent.look_at_shared_library(url, self.new_password)
        except SharedLibraryError as error:  # the address is in the box above
            self._say(self.tr("Could not connect: {error}").format(error=error.reason))
            return
        server = facts.server_version
        if facts.pgvector is None:
            self._say(
                self.tr(
                    "Connected to PostgreSQL {server}, but the server lacks pgvector (the "
                    "vector extension): its administrator installs it."
                ).format(server=server)
            )
        elif not facts.pgvector_installed:
            self._say(
                self.tr(
                    "Connected to PostgreSQL {server}. pgvector {pgvector} is on the server "
                    "but not yet in this database: Docent adds it when it opens the library if "
                    "this role may create extensions; otherwise its administrator runs CREATE "
                    "EXTENSION vector there once."
                ).format(server=server, pgvector=facts.pgvector)
            )
        elif facts.documents is None:
            self._say(
                self.tr(
                    "Connected to PostgreSQL {server} with pgvector {pgvector}. No library "
                    "there yet: Docent makes its tables when it opens it."
                ).format(server=server, pgvector=facts.pgvector)
            )
        else:
            self._say(
                self.tr(
                    "Connected to PostgreSQL {server} with pgvector {pgvector}: {count} "
                    "documents you may read."
                ).format(server=server, pgvector=facts.pgvector, count=facts.documents)
            )

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.show()
