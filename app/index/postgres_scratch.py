"""Databases made for a while and dropped after (`docent bench retrieval --library URL`): the
bench never writes into the library the URL names, only beside it, on the same server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from app.index.shared import SharedLibraryError, SharedLocation, redacted


def _connect(location: SharedLocation) -> psycopg.Connection[tuple[object, ...]]:
    password = None
    if urlsplit(location.url).password is None and location.keychain_password is not None:
        password = location.keychain_password()
    conninfo = make_conninfo(location.url, password=password) if password else location.url
    try:
        return psycopg.connect(conninfo, autocommit=True)
    except psycopg.Error as error:
        # The message may quote the connection string: only the URL, redacted, is named.
        raise SharedLibraryError(f"cannot connect to {redacted(location.url)}") from error


@contextlib.contextmanager
def scratch_database(location: SharedLocation, name: str) -> Iterator[SharedLocation]:
    """A new, empty database `name` on the server of `location` (whose role may create
    databases), dropped on the way out: where it is."""
    with _connect(location) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield SharedLocation(
            urlunsplit(urlsplit(location.url)._replace(path=f"/{name}")),
            location.keychain_password,
        )
    finally:
        with _connect(location) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def database_bytes(location: SharedLocation) -> int:
    """The database's size on disk: tables, their GIN and HNSW indexes, TOAST."""
    with _connect(location) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(str(row[0]))
