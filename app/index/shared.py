"""Where a shared library is, and how its URL may be shown: light enough for start-up (the
database client itself loads only with a shared library, in app/index/postgres.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from app.errors import DocentError


class SharedLibraryError(DocentError):
    """The shared library cannot be reached or refused us (the message names no password);
    `reason`: the same without the library's URL, for where the URL is already shown."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


def redacted(url: str) -> str:
    """The URL with any password replaced: what errors and logs may show."""
    return _with_password(url, "***")


def without_password(url: str) -> str:
    return _with_password(url, None)


def _with_password(url: str, password: str | None) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    login = user if password is None else f"{user}:{password}"
    return urlunsplit(parts._replace(netloc=f"{login}@{host}" if login else host))


def library_key(url: str) -> str:
    """The keychain name of a shared library's password (app.secrets)."""
    return f"library:{without_password(url)}"


def personal_name(url: str) -> str:
    """The local file name of this person's own data beside a shared library (history,
    conversations, the intake's queue): one per shared library, so that the ids its answers
    cite are never another library's."""
    digest = hashlib.sha256(without_password(url).encode()).hexdigest()[:16]
    return f"shared-{digest}.sqlite3"


@dataclass(frozen=True, slots=True)
class SharedLocation:
    """Where a shared library is: its URL, and how to ask the keychain for a password the URL
    does not hold (called on the store's worker thread: it may block)."""

    url: str
    keychain_password: Callable[[], str | None] | None = None

    def __repr__(self) -> str:
        return f"SharedLocation({redacted(self.url)!r})"


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What a look at a shared library's server found (Settings → Library → Test)."""

    server_version: str
    pgvector: str | None  # the version in that database, else the server's; None: neither
    pgvector_installed: bool  # in that database already (else the first open adds it)
    documents: int | None  # the documents this role may read; None: no Docent tables yet
