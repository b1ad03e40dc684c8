"""The library's SQLite file. A Store is confined to the thread that created it.

The writer Store lives on the single database-writer thread; readers open their own Store, and WAL
lets them search while a document is being written. Every document is written in one transaction,
so a crash or a bad file never leaves half a document and never touches the others. Other
processes (the CLI, `docent serve-mcp`) may write the same file: write transactions take the lock
up front, and the index version tells a reader when someone else changed what can be retrieved.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlite_utils import Database

from app.cjk import segment_for_index
from app.documents import Chunk
from app.documents.ocr import WordBox
from app.index.schema import SEARCHABLE, migrate
from app.index.terms import index_form, match_expression, selective_terms
from app.paths import private_file

_BATCH = 64
EMBEDDING_MODEL_KEY = "embedding_model"
LOCK_TIMEOUT_S = 30  # SQLite's own wait for another process's write lock
WAL_SIZE_LIMIT = 64 * 1024 * 1024
_LOCK_ATTEMPTS = 3
# Queries both document stores run (the shared one with `%s` for `?`: app/index/postgres.py).
CHUNK_ROWS = """SELECT c.id, c.document_id, d.path, d.title, c.ordinal, c.page, c.page_label,
                        c.heading, c.text
                 FROM chunks c JOIN documents d ON d.id = c.document_id"""
NEXT_OCR_PAGE = """SELECT o.document_id, d.path, o.page, d.size, d.mtime_ns FROM ocr_pages o
                   JOIN documents d ON d.id = o.document_id
                   WHERE o.words IS NULL ORDER BY o.document_id, o.page LIMIT 1"""
PAGE_TO_SHOW = """SELECT d.size, d.mtime_ns, o.words FROM documents d
                  LEFT JOIN ocr_pages o ON o.document_id = d.id AND o.page = ?
                  WHERE d.path = ?"""


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    id: int
    path: str
    title: str
    format: str
    sha256: str
    size: int
    mtime_ns: int
    pages: int
    chunks: int
    embedded: int
    note: str | None
    indexed_at: str
    ocr_done: int  # pages OCR'd, of
    ocr_pages: int  # the pages without a text layer

    @property
    def name(self) -> str:
        return Path(self.path).name


@dataclass(frozen=True, slots=True)
class NewDocument:
    path: str
    title: str
    format: str
    sha256: str
    size: int
    mtime_ns: int
    pages: int
    note: str | None
    ocr_pages: Sequence[int] = ()  # pages left to OCR

    def row(self) -> list[Any]:
        """The values of a new `documents` row, in the order both stores insert them."""
        return [
            self.path,
            self.title,
            self.format,
            self.sha256,
            self.size,
            self.mtime_ns,
            self.pages,
            self.note,
            datetime.now(UTC).isoformat(timespec="seconds"),
        ]


@dataclass(frozen=True, slots=True)
class OcrPending:
    document_id: int
    path: str
    page: int
    size: int  # the file as it was indexed: OCR reads that file only
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class QueuedFile:
    """A file the intake was given and has not finished (schema step 9)."""

    path: str
    root: str | None  # the real folder it must still lie in; None: given by itself
    force: bool


@dataclass(frozen=True, slots=True)
class Queue:
    """The intake's unfinished work as stored: `done` files finished of `done + len(left)`."""

    done: int
    left: list[QueuedFile]


@dataclass(frozen=True, slots=True)
class PageToShow:
    indexed: tuple[int, int] | None  # the file's size and time as indexed; None: not indexed
    words: list[WordBox]  # the page's OCR'd words and their boxes; none for a text layer


@dataclass(frozen=True, slots=True)
class Written:
    """A document stored: its id, the id of the version it replaced, the new index version."""

    document_id: int
    replaced: int | None
    version: int


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    document_id: int
    document_path: str
    document_title: str
    ordinal: int
    page: int
    page_label: str
    heading: str | None
    text: str

    @property
    def document_name(self) -> str:
        return Path(self.document_path).name


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    question: str
    scope: Sequence[int]
    answer: str
    status: str  # finished | cancelled | failed
    error: str | None
    route: str
    model: str
    reason: str
    citations: Sequence[dict[str, Any]]
    retrieval_s: float | None
    ttft_s: float | None
    total_s: float
    prompt_tokens: int
    completion_tokens: int
    tokens_per_s: float | None
    cost_usd: float | None  # None: unknown (a cloud model without a price)
    grounded: float | None
    sent: Sequence[dict[str, str]] | None = None  # exactly what a cloud call sent
    conversation_id: int | None = None
    standalone: str | None = None  # the question as retrieval read it (a follow-up's rewrite)
    turn: dict[str, Any] | None = None  # a conversation turn's prompt (see answering.conversation)
    why: dict[str, Any] | None = None  # `reason` as its code and values (routing.Reason.as_dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry(HistoryRecord):
    """A recorded answer as the history gives it back: the record, its id and when."""

    id: int
    asked_at: str

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> HistoryEntry:
        decoded = {
            name: None if row[name] is None else json.loads(row[name])
            for name in ("scope", "citations", "sent", "turn", "why")
        }
        return cls(**(row | decoded))


@dataclass(frozen=True, slots=True)
class Spending:
    known_usd: float
    unpriced: int  # answers whose cost is unknown


def text_version(document: DocumentInfo) -> str:
    """What a stored summary was made of: the file's content and the pages OCR had read (a
    pass that reads another page adds text, not a new file). Kept in the summaries' `sha256`
    column, whose name predates OCR."""
    return f"{document.sha256}/{document.ocr_done}"


def embedding_text(heading: str | None, text: str) -> str:
    """What the embedder sees: the section heading gives a passage its topic."""
    if heading and not text.startswith(heading):
        return f"{heading}\n{text}"
    return text


class Store:
    def __init__(self, path: Path) -> None:
        private_file(path)  # SQLite gives the -wal and -shm files the database file's mode
        # Autocommit at the driver level: transactions are explicit (writing(), or atomic()
        # for a reader's snapshot).
        connection = sqlite3.connect(path, isolation_level=None, timeout=LOCK_TIMEOUT_S)
        connection.create_function(SEARCHABLE, 1, segment_for_index, deterministic=True)
        self.db = Database(connection)
        self._enable_wal()
        for pragma in (
            "synchronous = NORMAL",
            "foreign_keys = ON",
            "temp_store = MEMORY",
            # The WAL is truncated back to this after a checkpoint: without it, the file keeps
            # the size it grew to under a long reader (an index run beside a slow search).
            f"journal_size_limit = {WAL_SIZE_LIMIT}",
        ):
            self.db.execute(f"PRAGMA {pragma}")
        migrate(self.db, self.writing)

    def _enable_wal(self) -> None:
        """Switching a new file to WAL needs it alone: a process opening it at the same moment
        gets "locked" at once (SQLite's busy wait does not cover it); it tries again."""
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while True:
            try:
                self.db.enable_wal()
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def close(self) -> None:
        self.db.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """A write transaction that takes the write lock first (BEGIN IMMEDIATE), waiting for
        another process's: a deferred one that reads first cannot wait (SQLite would risk a
        deadlock) and fails at once with "database is locked"."""
        for attempt in range(1, _LOCK_ATTEMPTS + 1):
            try:
                self.db.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or attempt == _LOCK_ATTEMPTS:
                    raise
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- documents -------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        return self._documents("", [])

    def document(self, document_id: int) -> DocumentInfo | None:
        return next(iter(self._documents("WHERE d.id = ?", [document_id])), None)

    def document_ids(self) -> set[int]:
        return {int(row[0]) for row in self.db.execute("SELECT id FROM documents")}

    def document_by_path(self, path: str) -> DocumentInfo | None:
        """Called for every file an index run sees: one indexed row, not the whole library."""
        return next(iter(self._documents("WHERE d.path = ?", [path])), None)

    def _documents(self, where: str, parameters: list[Any]) -> list[DocumentInfo]:
        rows = self.db.execute(
            f"""SELECT d.*, (SELECT count(*) FROM vectors v JOIN chunks c ON c.id = v.chunk_id
                             WHERE c.document_id = d.id) AS embedded,
                       (SELECT count(words) FROM ocr_pages o WHERE o.document_id = d.id)
                         AS ocr_done,
                       (SELECT count(*) FROM ocr_pages o WHERE o.document_id = d.id)
                         AS ocr_pages
                FROM documents d {where} ORDER BY d.title COLLATE NOCASE, d.id""",
            parameters,
        )
        return [_document(row, rows.description) for row in rows.fetchall()]

    def write_document(self, document: NewDocument, chunks: Iterable[Chunk]) -> Written:
        """Replace any earlier version of the document with this one, in one transaction.

        If `chunks` raises, nothing of this document is written and its earlier version stays.
        """
        with self.writing():
            replaced = None
            if old := self.db.execute(
                "SELECT id FROM documents WHERE path = ?", [document.path]
            ).fetchone():
                replaced = int(old[0])
                self.delete_document_rows(replaced)
            cursor = self.db.execute(
                """INSERT INTO documents (path, title, format, sha256, size, mtime_ns, pages,
                                          chunks, note, indexed_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)""",
                document.row(),
            )
            document_id = int(cursor.lastrowid or 0)
            count = 0
            for batch in _batched(chunks, _BATCH):
                self.insert_chunks(document_id, batch)
                count += len(batch)
            self.db.execute("UPDATE documents SET chunks = ? WHERE id = ?", [count, document_id])
            self.db.conn.executemany(
                "INSERT INTO ocr_pages (document_id, page) VALUES (?, ?)",
                [(document_id, page) for page in document.ocr_pages],
            )
            version = self.bump_index_version()
        return Written(document_id, replaced, version)

    # --- OCR -------------------------------------------------------------------------------

    def next_ocr_page(self) -> OcrPending | None:
        """The first page left to OCR, documents in the order they were indexed."""
        row = self.db.execute(NEXT_OCR_PAGE).fetchone()
        return OcrPending(*row) if row else None

    def ocr_progress(self, document_id: int) -> tuple[int, int]:
        """(pages OCR'd, pages to OCR) of a document."""
        row = self.db.execute(
            "SELECT count(words), count(*) FROM ocr_pages WHERE document_id = ?", [document_id]
        ).fetchone()
        return int(row[0]), int(row[1])

    def write_ocr_page(
        self, document_id: int, page: int, chunks: Sequence[Chunk], words: Sequence[Any]
    ) -> int | None:
        """Add an OCR'd page's chunks (after the document's others) and its words; the new
        index version, or None when the document was removed or replaced meanwhile."""
        with self.writing():
            cursor = self.db.execute(
                "UPDATE ocr_pages SET words = ? WHERE document_id = ? AND page = ? "
                "AND words IS NULL",
                [json.dumps(list(words), ensure_ascii=False), document_id, page],
            )
            if not cursor.rowcount:
                return None
            start = self.db.execute(
                "SELECT coalesce(max(ordinal) + 1, 0) FROM chunks WHERE document_id = ?",
                [document_id],
            ).fetchone()[0]
            appended = [replace(c, ordinal=start + i) for i, c in enumerate(chunks)]
            if appended:
                self.insert_chunks(document_id, appended)
            self.db.execute(
                "UPDATE documents SET chunks = chunks + ? WHERE id = ?",
                [len(appended), document_id],
            )
            # A summary read the document without this page.
            self.db.execute("DELETE FROM summaries WHERE document_id = ?", [document_id])
            return self.bump_index_version()

    def insert_chunks(self, document_id: int, batch: list[Chunk]) -> None:
        """A document's chunks and their full-text rows, inside the caller's transaction (also
        a library copy's, app/index/transfer.py)."""
        connection = self.db.conn
        # Explicit ids (the full-text rows share them) past every id ever used: AUTOINCREMENT
        # keeps its high-water mark in sqlite_sequence, so a removed chunk's id is never reused.
        first_id = connection.execute(
            """SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0),
                          coalesce((SELECT max(id) FROM chunks), 0)) + 1"""
        ).fetchone()[0]
        ids = range(first_id, first_id + len(batch))
        connection.executemany(
            """INSERT INTO chunks (id, document_id, ordinal, page, page_label, heading, text)
               VALUES (?, ?, ?, ?, ?, ?, ?)""",
            [
                (chunk_id, document_id, c.ordinal, c.page, c.page_label, c.heading, c.text)
                for chunk_id, c in zip(ids, batch, strict=True)
            ],
        )
        connection.executemany(
            "INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)",
            [
                (chunk_id, segment_for_index(embedding_text(c.heading, c.text)))
                for chunk_id, c in zip(ids, batch, strict=True)
            ],
        )

    def remove_document(self, document_id: int) -> int | None:
        """The new index version, or None when there was no such document."""
        with self.writing():
            if not self.delete_document_rows(document_id):
                return None
            return self.bump_index_version()

    def delete_document_rows(self, document_id: int) -> bool:
        """A document and what hangs off it, inside the caller's transaction; False when there
        was none."""
        self.db.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE document_id = ?)",
            [document_id],
        )
        return self.db.execute("DELETE FROM documents WHERE id = ?", [document_id]).rowcount > 0

    def bump_index_version(self) -> int:
        """Counts changes to what can be retrieved, vectors included (not history): answer
        caches key on it, and a library whose version moved by more than its own writes knows
        another process changed the index. Once per transaction: the new version, one up."""
        row = self.db.execute(
            "INSERT INTO meta (key, value) VALUES ('index_version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 RETURNING value"
        ).fetchone()
        return int(row[0])

    def index_version(self) -> int:
        return int(self.get_meta("index_version") or 0)

    def page_to_show(self, path: str, page: int) -> PageToShow:
        """What a preview needs from the index: the file as indexed, the page's OCR'd words."""
        return page_shown(self.db.execute(PAGE_TO_SHOW, [page, path]).fetchone())

    # --- search ----------------------------------------------------------------------------

    def keyword_search(
        self, terms: Sequence[str], limit: int, document_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) best first for chunks matching any term; bm25 is lower-is-better."""
        match = match_expression(self._selective(terms))
        if match is None:
            return []
        if document_ids is not None:
            marks = ",".join("?" * len(document_ids))
            sql = f"""SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts
                      WHERE chunks_fts MATCH ? AND rowid IN
                        (SELECT id FROM chunks WHERE document_id IN ({marks}))
                      ORDER BY score LIMIT ?"""
            parameters: list[Any] = [match, *document_ids, limit]
        else:
            sql = """SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts
                     WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?"""
            parameters = [match, limit]
        return [(int(r[0]), float(r[1])) for r in self.db.execute(sql, parameters).fetchall()]

    def _selective(self, terms: Sequence[str]) -> list[str]:
        if len(terms) < 3:
            return list(terms)
        marks = ",".join("?" * len(terms))
        frequency = dict(
            self.db.execute(
                f"SELECT term, doc FROM chunks_vocab WHERE term IN ({marks})",
                [index_form(term) for term in terms],
            ).fetchall()
        )
        return selective_terms(terms, frequency)

    def chunks(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"{CHUNK_ROWS} WHERE c.id IN ({marks})",
            list(ids),
        ).fetchall()
        return {int(row[0]): StoredChunk(*row) for row in rows}

    def page_chunks(self, document_id: int, page: int) -> list[StoredChunk]:
        rows = self.db.execute(
            f"{CHUNK_ROWS} WHERE c.document_id = ? AND c.page = ? ORDER BY c.ordinal",
            [document_id, page],
        ).fetchall()
        return [StoredChunk(*row) for row in rows]

    def document_chunks(self, document_id: int) -> list[StoredChunk]:
        """A document's chunks in reading order (what a summary reads); an OCR'd page's chunks
        come after the others' in ordinal order, so pages order them first."""
        rows = self.db.execute(
            f"{CHUNK_ROWS} WHERE c.document_id = ? ORDER BY c.page, c.ordinal", [document_id]
        ).fetchall()
        return [StoredChunk(*row) for row in rows]

    # --- summaries -------------------------------------------------------------------------

    def summary(self, document_id: int, part: str, version: str) -> str | None:
        """The stored summary (JSON) of this text version of the document, if any."""
        row = self.db.execute(
            "SELECT summary FROM summaries WHERE document_id = ? AND part = ? AND sha256 = ?",
            [document_id, part, version],
        ).fetchone()
        return str(row[0]) if row else None

    def save_summary(
        self, document_id: int, part: str, version: str, summary: str, *, replace: bool = True
    ) -> bool:
        """Store a summary of the document's text `version` (text_version), replacing the one
        kept unless `replace` is False; False when the document was removed or its text changed
        while it was being made (a summary of an older text is not kept), or one was kept."""
        with self.writing():
            current = self._documents("WHERE d.id = ?", [document_id])
            if not current or text_version(current[0]) != version:
                return False
            if not replace and self.summary(document_id, part, version) is not None:
                return False
            self.db.execute(
                """INSERT INTO summaries (document_id, part, sha256, summary, made_at)
                   VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(document_id, part) DO UPDATE SET sha256 = excluded.sha256,
                     summary = excluded.summary, made_at = excluded.made_at""",
                [document_id, part, version, summary, datetime.now(UTC).isoformat()],
            )
        return True

    # --- the intake's queue ----------------------------------------------------------------

    def queue_files(self, files: Sequence[QueuedFile]) -> None:
        """Add files to the queue (a file queued again is due again, forced if either was)."""
        with self.writing():
            self.db.conn.executemany(
                """INSERT INTO queued_files (path, root, force) VALUES (?, ?, ?)
                   ON CONFLICT(path) DO UPDATE SET done = 0, root = excluded.root,
                       force = max(force, excluded.force)""",
                [(f.path, f.root, int(f.force)) for f in files],
            )

    def queue(self) -> Queue:
        with self.db.atomic():  # one snapshot for the count and the rows
            done = int(
                self.db.execute("SELECT count(*) FROM queued_files WHERE done").fetchone()[0]
            )
            rows = self.db.execute(
                "SELECT path, root, force FROM queued_files WHERE NOT done ORDER BY id"
            ).fetchall()
        return Queue(done, [QueuedFile(r[0], r[1], bool(r[2])) for r in rows])

    def claim_queued(self, path: str, owner: str, running: Callable[[str], bool]) -> str | None:
        """Claim a queued file for `owner` (process_identity); None when it may go ahead, else
        the running process that holds it. `running` tells whether a holder still runs."""
        with self.writing():
            row = self.db.execute(
                "SELECT claimed_by FROM queued_files WHERE path = ? AND NOT done", [path]
            ).fetchone()
            if row is None:  # finished meanwhile, or never stored: reading it again is a skip
                return None
            holder = row[0]
            if holder is not None and holder != owner and running(holder):
                return str(holder)
            self.db.execute("UPDATE queued_files SET claimed_by = ? WHERE path = ?", [owner, path])
        return None

    def release_queued(self, owner: str) -> None:
        """The unfinished files `owner` claimed are free again (it stops indexing)."""
        with self.writing():
            self.db.execute(
                "UPDATE queued_files SET claimed_by = NULL WHERE claimed_by = ? AND NOT done",
                [owner],
            )

    def finish_queued(self, paths: Sequence[str]) -> None:
        """Mark files finished; once none is left, the queue is emptied."""
        with self.writing():
            self.db.conn.executemany(
                "UPDATE queued_files SET done = 1 WHERE path = ?", [(p,) for p in paths]
            )
            self.db.execute(
                """DELETE FROM queued_files
                   WHERE NOT EXISTS (SELECT 1 FROM queued_files WHERE NOT done)"""
            )

    def set_meta_now(self, key: str, value: str | None) -> None:
        """Set (or, with None, delete) one meta value in a transaction of its own."""
        with self.writing():
            if value is None:
                self.db.execute("DELETE FROM meta WHERE key = ?", [key])
            else:
                self.set_meta(key, value)

    # --- embeddings ------------------------------------------------------------------------

    def pending_embeddings(self, limit: int) -> list[tuple[int, int, str]]:
        """(chunk id, document id, text to embed) of chunks that have no vector yet."""
        rows = self.db.execute(
            """SELECT c.id, c.document_id, c.heading, c.text FROM chunks c
               LEFT JOIN vectors v ON v.chunk_id = c.id
               WHERE v.chunk_id IS NULL ORDER BY c.id LIMIT ?""",
            [limit],
        ).fetchall()
        return [(int(r[0]), int(r[1]), embedding_text(r[2], r[3])) for r in rows]

    def count_pending_embeddings(self) -> int:
        return int(
            self.db.execute(
                """SELECT count(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id
                   WHERE v.chunk_id IS NULL"""
            ).fetchone()[0]
        )

    def save_vectors(self, ids: Sequence[int], vectors: np.ndarray) -> tuple[list[int], int]:
        """Store vectors for chunks that still exist; returns the ids stored and the new index
        version."""
        with self.writing():
            stored = []
            for chunk_id, vector in zip(ids, vectors, strict=True):
                cursor = self.db.conn.execute(
                    """INSERT OR REPLACE INTO vectors (chunk_id, vector)
                       SELECT ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)""",
                    [chunk_id, np.asarray(vector, dtype=np.float32).tobytes(), chunk_id],
                )
                if cursor.rowcount:
                    stored.append(chunk_id)
            version = self.bump_index_version()
        return stored, version

    def all_vectors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(chunk ids, document ids, matrix) of every stored vector, and the index version they
        are of."""
        joined = "FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
        # Rows are copied a batch at a time into arrays sized up front: holding every BLOB at
        # once, or concatenating batches, left the reader thread's heap holding as much again as
        # the matrix (RSS 280 MB for 146 MB of vectors at 100k chunks).
        with self.db.atomic():  # one snapshot for the count and the rows
            count = int(self.db.execute(f"SELECT count(*) {joined}").fetchone()[0])
            ids = np.empty(count, np.int64)
            documents = np.empty(count, np.int64)
            matrix = np.empty((0, 0), np.float32)
            cursor = self.db.execute(
                f"SELECT v.chunk_id, c.document_id, v.vector {joined} ORDER BY v.chunk_id"
            )
            done = 0
            while rows := cursor.fetchmany(4096):
                end = done + len(rows)
                ids[done:end] = [r[0] for r in rows]
                documents[done:end] = [r[1] for r in rows]
                block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32)
                if not done:
                    matrix = np.empty((count, block.size // len(rows)), np.float32)
                matrix[done:end] = block.reshape(len(rows), -1)
                done = end
            version = self.index_version()
        return ids, documents, matrix, version

    def reset_embeddings(self, model: str) -> None:
        """Drop vectors made by another embedding model: they are not comparable."""
        if self.get_meta(EMBEDDING_MODEL_KEY) != model:
            with self.writing():
                self.db.execute("DELETE FROM vectors")
                self.set_meta(EMBEDDING_MODEL_KEY, model)
                self.bump_index_version()

    # --- history and meta ------------------------------------------------------------------

    def add_history(self, record: HistoryRecord) -> int:
        with self.writing():  # a turn and its conversation's last change, together
            return self._add_history(record)

    def _add_history(self, record: HistoryRecord) -> int:
        cursor = self.db.execute(
            """INSERT INTO history (asked_at, question, scope, answer, status, error, route,
                   model, reason, citations, retrieval_s, ttft_s, total_s, prompt_tokens,
                   completion_tokens, tokens_per_s, cost_usd, grounded, sent, conversation_id,
                   standalone, turn, why)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                datetime.now(UTC).isoformat(timespec="milliseconds"),
                record.question,
                json.dumps(list(record.scope)),
                record.answer,
                record.status,
                record.error,
                record.route,
                record.model,
                record.reason,
                json.dumps(list(record.citations), ensure_ascii=False),
                record.retrieval_s,
                record.ttft_s,
                record.total_s,
                record.prompt_tokens,
                record.completion_tokens,
                record.tokens_per_s,
                record.cost_usd,
                record.grounded,
                None if record.sent is None else json.dumps(list(record.sent), ensure_ascii=False),
                record.conversation_id,
                record.standalone,
                None if record.turn is None else json.dumps(record.turn, ensure_ascii=False),
                None if record.why is None else json.dumps(record.why, ensure_ascii=False),
            ],
        )
        history_id = int(cursor.lastrowid or 0)
        self.db.execute(
            "INSERT INTO history_fts (rowid, body) VALUES (?, ?)",
            [history_id, segment_for_index(f"{record.question}\n{record.answer}")],
        )
        if record.conversation_id is not None:
            self.db.execute(
                "UPDATE conversations SET updated_at = ? WHERE id = ?",
                [datetime.now(UTC).isoformat(timespec="microseconds"), record.conversation_id],
            )
        return history_id

    def spending_since(self, since: datetime) -> Spending:
        """What answers cost from `since` on (the month's cloud spending)."""
        row = self.db.execute(
            """SELECT coalesce(sum(cost_usd), 0), count(*) FILTER (WHERE cost_usd IS NULL)
               FROM history WHERE asked_at >= ?""",
            [since.isoformat(timespec="milliseconds")],
        ).fetchone()
        return Spending(float(row[0]), int(row[1]))

    def history(self, limit: int = 50) -> list[HistoryEntry]:
        """The latest answers, the newest first."""
        rows = self.db.query("SELECT * FROM history ORDER BY id DESC LIMIT ?", [limit])
        return [HistoryEntry.from_row(row) for row in rows]

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )


def page_shown(row: tuple[Any, ...] | None) -> PageToShow:
    """A PAGE_TO_SHOW row as the preview takes it."""
    if row is None:
        return PageToShow(None, [])
    words = [tuple(word) for word in json.loads(row[2])] if row[2] else []
    return PageToShow((int(row[0]), int(row[1])), words)


def _document(row: tuple[Any, ...], description: Any) -> DocumentInfo:
    values = dict(zip((column[0] for column in description), row, strict=True))
    return DocumentInfo(**values)


def _batched(items: Iterable[Chunk], size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
