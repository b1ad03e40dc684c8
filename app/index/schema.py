"""The library database's schema and its migrations (PRAGMA user_version counts them)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from sqlite_utils import Database

from app.errors import DocentError

# The SQL function (app.cjk.segment_for_index) a Store registers: text as the FTS tables hold it.
SEARCHABLE = "docent_searchable"

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
    # 3: ids are never reused (AUTOINCREMENT): a cache, a vector or a client holding the id of
    # a removed passage must not find another document's passage under it. SQLite cannot add
    # AUTOINCREMENT to a table: each is rebuilt (its documented procedure; foreign keys are off
    # meanwhile, so dropping the old tables cascades into nothing).
    (
        """CREATE TABLE documents_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
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
        "INSERT INTO documents_new SELECT * FROM documents",
        """CREATE TABLE chunks_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            page INTEGER NOT NULL,
            page_label TEXT NOT NULL,
            heading TEXT,
            text TEXT NOT NULL
        )""",
        "INSERT INTO chunks_new SELECT * FROM chunks",
        "DROP TABLE chunks",
        "DROP TABLE documents",
        "ALTER TABLE documents_new RENAME TO documents",
        "ALTER TABLE chunks_new RENAME TO chunks",
        "CREATE INDEX chunks_by_document ON chunks(document_id, ordinal)",
    ),
    # 4: a cloud model without a price costs NULL (unknown), not 0. SQLite cannot drop a NOT
    # NULL: the table is rebuilt, its ids kept.
    (
        """CREATE TABLE history_new (
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
            cost_usd REAL,
            grounded REAL,
            sent TEXT
        )""",
        "INSERT INTO history_new SELECT * FROM history",
        "DROP TABLE history",
        "ALTER TABLE history_new RENAME TO history",
    ),
    # 5: pages without a text layer, OCR'd after the document is indexed; `words` holds the
    # OCR'd words and their boxes (JSON) once done, for the preview's highlights.
    (
        """CREATE TABLE ocr_pages (
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            page INTEGER NOT NULL,
            words TEXT,
            PRIMARY KEY (document_id, page)
        )""",
    ),
    # 6: conversations. A history row is a turn of its conversation (in id order); `standalone`
    # is the question as retrieval read it, `turn` (JSON) the prompt's user message as sent and
    # the sources it introduced, so a follow-up re-sends the earlier turns verbatim.
    (
        """CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "ALTER TABLE history ADD COLUMN conversation_id INTEGER REFERENCES conversations(id)",
        "ALTER TABLE history ADD COLUMN standalone TEXT",
        "ALTER TABLE history ADD COLUMN turn TEXT",
        "CREATE INDEX history_by_conversation ON history(conversation_id, id)",
    ),
    # 7: stored summaries (app/answering/summary.py), one per document and part ('' for the
    # whole document, else a chapter's heading), of the document's content (sha256): a
    # reindexed document gets a new id, and its old summaries go with the old row.
    (
        """CREATE TABLE summaries (
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            part TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            summary TEXT NOT NULL,
            made_at TEXT NOT NULL,
            PRIMARY KEY (document_id, part)
        )""",
    ),
    # 8: conversation and history ids are never reused either (AUTOINCREMENT): a stale id, held
    # by an MCP client or a CLI script, must not land in a newer conversation. An MCP client's
    # conversation has a `handle`, the unguessable id the server gives the client: the only
    # way a client reaches a conversation (the desktop's have none).
    (
        """CREATE TABLE conversations_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            handle TEXT UNIQUE
        )""",
        "INSERT INTO conversations_new (id, title, created_at, updated_at) "
        "SELECT id, title, created_at, updated_at FROM conversations",
        """CREATE TABLE history_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
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
            cost_usd REAL,
            grounded REAL,
            sent TEXT,
            conversation_id INTEGER REFERENCES conversations(id),
            standalone TEXT,
            turn TEXT
        )""",
        "INSERT INTO history_new SELECT * FROM history",
        "DROP TABLE history",
        "DROP TABLE conversations",
        "ALTER TABLE conversations_new RENAME TO conversations",
        "ALTER TABLE history_new RENAME TO history",
        "CREATE INDEX history_by_conversation ON history(conversation_id, id)",
        # A stored summary is of the file's content and the pages OCR had read when it was
        # made (store.text_version): an OCR pass that reads another page makes it stale.
        """UPDATE summaries SET sha256 = sha256 || '/' || (
            SELECT count(words) FROM ocr_pages o WHERE o.document_id = summaries.document_id)""",
    ),
    # 9: the files the user added and the intake has not finished, so that a restart (or a
    # paused queue resumed later) continues where it stopped; `root` is the real folder a file
    # found in a folder must still lie in (app/intake/folders.py), NULL for a file given alone.
    # Finished rows stay (done = 1) until the queue empties: "312/1000" survives a restart.
    (
        """CREATE TABLE queued_files (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL UNIQUE,
            root TEXT,
            force INTEGER NOT NULL,
            done INTEGER NOT NULL DEFAULT 0
        )""",
    ),
    # 10: which process is reading a queued file (app/processes.py: process_identity), so that
    # two Docent processes on one library (the window and `docent index --resume`) never read
    # the same file at once; a claim whose process has ended is taken over.
    ("ALTER TABLE queued_files ADD COLUMN claimed_by TEXT",),
    # 11: the answers' words, searchable (the sidebar's search over conversations): each history
    # row's question and answer in the form chunks_fts holds (CJK runs as bigrams), rowid =
    # history.id. Rows are added where history rows are (Store.add_history, a copied
    # conversation) through the SEARCHABLE function each Store registers; a deleted row leaves
    # by trigger, whoever deletes it.
    (
        """CREATE VIRTUAL TABLE history_fts USING fts5(
            body, tokenize = 'unicode61 remove_diacritics 2'
        )""",
        f"""INSERT INTO history_fts (rowid, body)
            SELECT id, {SEARCHABLE}(question || char(10) || answer) FROM history""",
        """CREATE TRIGGER history_fts_delete AFTER DELETE ON history BEGIN
            DELETE FROM history_fts WHERE rowid = old.id;
        END""",
    ),
    # 12: each answer's reason as its code and values (JSON), so that a recorded answer shown
    # again is worded in the window's language; rows from before keep their English words.
    ("ALTER TABLE history ADD COLUMN why TEXT",),
)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(DocentError):
    """The database was written by a newer Docent."""


class SchemaError(DocentError):
    """A migration would leave the database inconsistent (it is rolled back)."""


def migrate(db: Database, writing: Callable[[], AbstractContextManager[None]]) -> int:
    """Bring the database to SCHEMA_VERSION, one transaction per step; returns the version found.

    Several processes may open a library at once (the window and `docent serve-mcp` starting
    together, three `docent` commands on a new library): each step runs under the write lock
    (`writing`, BEGIN IMMEDIATE) and re-reads the version there, so a step another process has
    made meanwhile is skipped, never made twice on a schema it has already changed."""
    found = _version(db)  # outside the lock: an up-to-date library takes none
    if found == SCHEMA_VERSION:
        return found
    # Off for rebuilding tables; it cannot change inside a transaction, hence around them.
    enforced = int(db.execute("PRAGMA foreign_keys").fetchone()[0])
    db.execute("PRAGMA foreign_keys = OFF")
    try:
        while True:
            with writing():
                version = _version(db)
                if version == SCHEMA_VERSION:
                    break
                for statement in MIGRATIONS[version]:
                    db.execute(statement)
                if broken := db.execute("PRAGMA foreign_key_check").fetchall():
                    raise SchemaError(f"migration {version + 1} broke references: {broken[:3]}")
                db.execute(f"PRAGMA user_version = {version + 1}")
    finally:
        db.execute(f"PRAGMA foreign_keys = {enforced}")
    return found


def _version(db: Database) -> int:
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"the library was written by a newer Docent (schema {version} > {SCHEMA_VERSION})"
        )
    return version
