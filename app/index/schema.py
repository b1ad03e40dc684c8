"""The library database's schema and its migrations (PRAGMA user_version counts them)."""

from __future__ import annotations

from sqlite_utils import Database

from app.errors import DocentError

# Each entry migrates from version i to i + 1. Append; never edit a released step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            format TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            pages INTEGER NOT NULL,
            chunks INTEGER NOT NULL,
            note TEXT,
            indexed_at TEXT NOT NULL
        )""",
        """CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            page INTEGER NOT NULL,
            page_label TEXT NOT NULL,
            heading TEXT,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX chunks_by_document ON chunks(document_id, ordinal)",
        # Holds the searchable form of each chunk (CJK runs as bigrams), rowid = chunks.id.
        # No porter stemmer: the vocabulary must hold the words a query names, so that terms
        # too common to rank (see index.terms.selective_terms) can be found and dropped.
        """CREATE VIRTUAL TABLE chunks_fts USING fts5(
            body, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        "CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, 'row')",
        """CREATE TABLE vectors (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            vector BLOB NOT NULL
        )""",
        """CREATE TABLE history (
            id INTEGER PRIMARY KEY,
            asked_at TEXT NOT NULL,
            question TEXT NOT NULL,
            scope TEXT NOT NULL,
            answer TEXT NOT NULL,
            status TEXT NOT NULL,
            error TEXT,
            route TEXT NOT NULL,
            model TEXT NOT NULL,
            reason TEXT NOT NULL,
            citations TEXT NOT NULL,
            retrieval_s REAL,
            ttft_s REAL,
            total_s REAL NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            tokens_per_s REAL,
            cost_usd REAL NOT NULL,
            grounded REAL
        )""",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    # 2: what each cloud call sent, so the user can see it (NULL for local answers).
    ("ALTER TABLE history ADD COLUMN sent TEXT",),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(DocentError):
    """The database was written by a newer Docent."""


def migrate(db: Database) -> int:
    """Bring the database to SCHEMA_VERSION, one transaction per step; returns the old version."""
    current = int(db.execute("PRAGMA user_version").fetchone()[0])
    if current > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"the library was written by a newer Docent (schema {current} > {SCHEMA_VERSION})"
        )
    for version in range(current, SCHEMA_VERSION):
        with db.atomic():
            for statement in MIGRATIONS[version]:
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {version + 1}")
    return current
