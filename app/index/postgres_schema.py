"""A shared library's PostgreSQL schema and its migrations (the `docent_schema` row counts them).

Only the shared half of a library lives here (app/index/document_store.py): documents, chunks
with their keyword terms and vectors, OCR'd pages, summaries. Several desktops open one database
at once: each step runs under a transaction-scoped advisory lock and re-reads the version there,
so a step another desktop made meanwhile is skipped, never made twice.
"""

from __future__ import annotations

from typing import Any

import psycopg

from app.errors import DocentError

# Any constant: the advisory lock every migration step takes (and vector index creation).
SCHEMA_LOCK = 0x646F63656E74  # "docent"

# Each entry migrates from version i to i + 1. Append; never edit a released step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE EXTENSION IF NOT EXISTS vector",
        # `tokens`: the document's chunks' keyword terms counted, for BM25's average length.
        """CREATE TABLE documents (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            path text NOT NULL UNIQUE,
            title text NOT NULL,
            format text NOT NULL,
            sha256 text NOT NULL,
            size bigint NOT NULL,
            mtime_ns bigint NOT NULL,
            pages integer NOT NULL,
            chunks integer NOT NULL,
            tokens bigint NOT NULL DEFAULT 0,
            note text,
            indexed_at text NOT NULL
        )""",
        # `terms`: the chunk's keyword terms exactly as the SQLite index tokenizes them (FTS5
        # unicode61 over CJK bigrams), with their positions; `length`: how many there are.
        """CREATE TABLE chunks (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            page integer NOT NULL,
            page_label text NOT NULL,
            heading text,
            text text NOT NULL,
            terms tsvector NOT NULL,
            length integer NOT NULL
        )""",
        "CREATE INDEX chunks_by_document ON chunks (document_id, ordinal)",
        "CREATE INDEX chunks_terms ON chunks USING gin (terms)",
        # The dimension is the embedder's: the HNSW index is made on the first vectors saved,
        # over `embedding::vector(n)` (PostgresStore._ensure_vector_index).
        """CREATE TABLE vectors (
            chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            document_id bigint NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX vectors_by_document ON vectors (document_id)",
        """CREATE TABLE ocr_pages (
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            page integer NOT NULL,
            words text,
            PRIMARY KEY (document_id, page)
        )""",
        """CREATE TABLE summaries (
            document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            part text NOT NULL,
            sha256 text NOT NULL,
            summary text NOT NULL,
            made_at text NOT NULL,
            PRIMARY KEY (document_id, part)
        )""",
        "CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SharedSchemaTooNew(DocentError):
    """The shared library was written by a newer Docent."""


def migrate(connection: psycopg.Connection[tuple[Any, ...]]) -> int:
    """Bring the database to SCHEMA_VERSION, one transaction per step; the version found."""
    found = None
    while True:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
            connection.execute("CREATE TABLE IF NOT EXISTS docent_schema (version integer)")
            row = connection.execute("SELECT version FROM docent_schema").fetchone()
            version = int(row[0]) if row else 0
            found = version if found is None else found
            if version > SCHEMA_VERSION:
                raise SharedSchemaTooNew(
                    f"the shared library was written by a newer Docent "
                    f"(schema {version} > {SCHEMA_VERSION})"
                )
            if version == SCHEMA_VERSION:
                return found
            for statement in MIGRATIONS[version]:
                connection.execute(statement)
            if row is None:
                connection.execute("INSERT INTO docent_schema (version) VALUES (1)")
            else:
                connection.execute("UPDATE docent_schema SET version = %s", [version + 1])
