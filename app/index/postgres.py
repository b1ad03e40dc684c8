"""A shared library's documents in PostgreSQL with pgvector: the `DocumentStore` a team shares.

Retrieval keeps the embedded library's quality by doing what it does. Keyword search: each
chunk's terms are those the SQLite index holds, tokenized by SQLite's own FTS5 `unicode61`
tokenizer over the same CJK bigrams (`Terms`), kept in a `tsvector` with their positions (no
text-search configuration touches them), found through a GIN index and ranked by FTS5's own
BM25 formula in SQL, so the candidate lists match the SQLite index's. Vectors: pgvector with an
HNSW index (cosine), searched on the server. Fusion and the reranker above are unchanged.

A document's path is its identity and its content hash decides a duplicate: two desktops writing
one file at once take its advisory lock in turn, and the second finds the first's identical row
and skips (`INSERT ... ON CONFLICT` guards the rest). Passwords come from the URL or the
keychain and never reach a message: errors name the URL `redacted`.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from app.cjk import segment_for_index
from app.documents import Chunk
from app.index.postgres_schema import CHANGES_CHANNEL, SCHEMA_LOCK, migrate
from app.index.shared import ServerFacts, SharedLibraryError, SharedLocation, redacted
from app.index.store import (
    CHUNK_ROWS,
    EMBEDDING_MODEL_KEY,
    NEXT_OCR_PAGE,
    PAGE_TO_SHOW,
    DocumentInfo,
    NewDocument,
    OcrPending,
    PageToShow,
    StoredChunk,
    Written,
    embedding_text,
    page_shown,
    text_version,
)
from app.index.terms import index_form, selective_terms

DIMENSION_KEY = "vector_dimension"
# HNSW's candidate list: at least the 50 candidates a search asks for (its default, 40, would
# cut every vector list to 40); iterative scans keep a scoped search from coming back short.
EF_SEARCH = 100
CONNECT_TIMEOUT_S = 10
# FTS5's bm25() constants (sqlite/ext/fts5/fts5_aux.c): the ranking is the SQLite index's.
BM25_K1 = 1.2
BM25_B = 0.75
RECONNECT_S = 1.0  # how often a listener whose connection is gone tries again

_DOCUMENT_ROWS = """SELECT d.id, d.path, d.title, d.format, d.sha256, d.size, d.mtime_ns, d.pages,
        d.chunks, (SELECT count(*) FROM vectors v WHERE v.document_id = d.id) AS embedded,
        d.note, d.indexed_at,
        (SELECT count(words) FROM ocr_pages o WHERE o.document_id = d.id) AS ocr_done,
        (SELECT count(*) FROM ocr_pages o WHERE o.document_id = d.id) AS ocr_pages
    FROM documents d"""


class Terms:
    """Keyword terms as the SQLite index stores them: SQLite's own FTS5 tokenizer, run on an
    in-memory table (its `instance` vocabulary lists every token with its position)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
        )
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def close(self) -> None:
        self._db.close()

    def of(self, texts: Sequence[str]) -> list[tuple[str, int]]:
        """Each text's tsvector literal (term: positions) and its length in tokens."""
        self._db.executemany(
            "INSERT INTO t (rowid, body) VALUES (?, ?)",
            [(row, segment_for_index(text)) for row, text in enumerate(texts, 1)],
        )
        positions: list[dict[str, list[int]]] = [{} for _ in texts]
        lengths = [0] * len(texts)
        for row, term, offset in self._db.execute("SELECT doc, term, offset FROM v"):
            # tsvector positions start at 1 and stop at 16383; a term keeps 256 of them.
            positions[row - 1].setdefault(term, []).append(min(offset + 1, 16383))
            lengths[row - 1] += 1
        self._db.execute("DELETE FROM t")
        return [
            (
                " ".join(
                    f"{quoted(term)}:{','.join(map(str, sorted(set(found))[:256]))}"
                    for term, found in terms.items()
                ),
                length,
            )
            for terms, length in zip(positions, lengths, strict=True)
        ]


def quoted(lexeme: str) -> str:
    """A lexeme as a tsvector or tsquery literal writes it (nothing inside is an operator)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _pg(sql: str) -> str:
    """A query written for SQLite (`?` parameters) as psycopg takes it."""
    return sql.replace("?", "%s")


class NotReadable(SharedLibraryError):
    """A document this role may not read or index (the library's folder grants)."""


def _connect(location: SharedLocation) -> tuple[psycopg.Connection[tuple[Any, ...]], str | None]:
    """A connection to the shared library, and the keychain's password if one was used."""
    password = None
    if urlsplit(location.url).password is None and location.keychain_password is not None:
        password = location.keychain_password()
    try:
        options: dict[str, Any] = {"password": password} if password else {}
        if "connect_timeout" not in conninfo_to_dict(location.url):
            # Without one, an unreachable host (a laptop off the office network) holds the
            # window's library for the system's TCP timeout, minutes; the URL may set its own.
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        return psycopg.connect(make_conninfo(location.url, **options), autocommit=True), password
    except psycopg.Error as error:
        raise _refused(location, error, password) from None


def _refused(
    location: SharedLocation, error: psycopg.Error, password: str | None
) -> SharedLibraryError:
    """The server's words, on one line (libpq indents a hint on a line of its own), with no
    password in them."""
    reason = " ".join(str(error).split())
    for secret in (password, urlsplit(location.url).password):
        if secret:
            reason = reason.replace(secret, "***")
    return SharedLibraryError(f"shared library {redacted(location.url)}: {reason}", reason)


class ChangeListener:
    """Another desktop's (or process's) writes to the shared documents, as they commit: a thread
    of its own LISTENs on a connection of its own and calls `changed` with the table's name.

    Chosen over polling: a notification comes a few milliseconds after the writer's commit,
    costs the server nothing while nothing changes, and a hundred idle windows send it no
    queries (polling every few seconds would, and would still be seconds late). What it cannot
    cross (a pooler in transaction mode drops LISTEN) is said in the docs, not worked around.
    `ignored`: the backend whose notifications are not news (this library's own writer, whose
    writes the intake announces already)."""

    def __init__(self, location: SharedLocation, changed: Callable[[str], None]) -> None:
        self._location = location
        self._changed = changed
        self.ignored: int | None = None
        self._db = self._listening()
        # Its own channel too: close() wakes it through the server instead of waiting it out.
        self.stop_channel = f"docent_stop_{self.backend}"
        self._db.execute(f"LISTEN {self.stop_channel}")
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="shared-changes", daemon=True)
        self._thread.start()

    @property
    def backend(self) -> int:
        """The server process of the listening connection."""
        return self._db.info.backend_pid

    def _listening(self) -> psycopg.Connection[tuple[Any, ...]]:
        connection, _ = _connect(self._location)
        connection.execute(f"LISTEN {CHANGES_CHANNEL}")
        return connection

    def _listen(self) -> None:
        while not self._stopping.is_set():
            try:
                for notice in self._db.notifies(timeout=1.0):
                    if notice.channel == self.stop_channel:
                        self._stopping.set()
                        break
                    if notice.pid != self.ignored:
                        self._changed(notice.payload)
            except psycopg.Error:
                self._reconnect()
        self._db.close()

    def _reconnect(self) -> None:
        """The connection is gone (a server restart, a dropped network): listen again once the
        server answers, trying each second, then say that something may have changed meanwhile
        (what was notified while no one listened is lost)."""
        self._db.close()
        while not self._stopping.wait(RECONNECT_S):
            try:
                self._db = self._listening()
                self._db.execute(f"LISTEN {self.stop_channel}")
            except (psycopg.Error, SharedLibraryError):
                continue
            self._changed("")
            return

    def stop(self) -> None:
        """Stop listening (after `wake` reached the thread, at once; else within a second)."""
        self._stopping.set()
        self._thread.join()


def server_facts(location: SharedLocation) -> ServerFacts:
    """Connect as the library would and look, changing nothing (no tables are made)."""
    db, password = _connect(location)
    try:
        server_version = _one(db, "SHOW server_version")
        installed = _one(db, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        pgvector = installed or _one(
            db, "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        )
        documents = None
        if _one(db, "SELECT to_regclass('docent_schema')::text") is not None:
            documents = _one(db, "SELECT count(*) FROM documents")
        return ServerFacts(server_version, pgvector, installed is not None, documents)
    except psycopg.Error as error:
        raise _refused(location, error, password) from None
    finally:
        db.close()


def _one(db: psycopg.Connection[tuple[Any, ...]], sql: str) -> Any:
    row = db.execute(sql).fetchone()
    return None if row is None else row[0]


class PostgresStore:
    """The shared documents, confined to the worker thread that opened it (as a Store is)."""

    def __init__(self, location: SharedLocation) -> None:
        self.location = location
        self.db, password = _connect(location)
        try:
            migrate(self.db)
            register_vector(self.db)
            self.db.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
            self.db.execute("SET hnsw.iterative_scan = relaxed_order")
        except psycopg.Error as error:
            self.db.close()
            raise _refused(location, error, password) from None
        self._terms = Terms()
        self._dimension: int | None = None

    @property
    def backend(self) -> int:
        """The server process of this store's connection (whose notifications are its own)."""
        return self.db.info.backend_pid

    def wake(self, listener: ChangeListener) -> None:
        """Wake `listener`'s thread through the server, so that it stops now (a connection
        gone leaves it to notice within its second)."""
        with contextlib.suppress(psycopg.Error):
            self.db.execute("SELECT pg_notify(%s, '')", [listener.stop_channel])

    def close(self) -> None:
        self._terms.close()
        self.db.close()

    def _rows(
        self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()
    ) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, parameters).fetchall()

    def _value(self, sql: str, parameters: Sequence[Any] = ()) -> Any:
        row = self.db.execute(sql, parameters).fetchone()
        return None if row is None else row[0]

    # --- documents -------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        return self._documents("", [])

    def document(self, document_id: int) -> DocumentInfo | None:
        return next(iter(self._documents("WHERE d.id = %s", [document_id])), None)

    def document_ids(self) -> set[int]:
        return {int(row[0]) for row in self._rows("SELECT id FROM documents")}

    def document_by_path(self, path: str) -> DocumentInfo | None:
        return next(iter(self._documents("WHERE d.path = %s", [path])), None)

    def _documents(self, where: str, parameters: list[Any]) -> list[DocumentInfo]:
        rows = self._rows(f"{_DOCUMENT_ROWS} {where} ORDER BY lower(d.title), d.id", parameters)
        return [DocumentInfo(*row) for row in rows]

    def write_document(self, document: NewDocument, chunks: Iterable[Chunk]) -> Written:
        """Replace any earlier version of the document with this one, in one transaction; a
        version with the same content another desktop wrote meanwhile wins (it is kept)."""
        with self.db.transaction():
            # Writers of one path take turns: the second sees the first's committed row.
            self.db.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [document.path]
            )
            replaced = None
            old = self.db.execute(
                "SELECT id, sha256 FROM documents WHERE path = %s", [document.path]
            ).fetchone()
            if old is not None:
                if old[1] == document.sha256 and self._same_file(int(old[0]), document):
                    return Written(int(old[0]), None, self.index_version())
                replaced = int(old[0])
                self.db.execute("DELETE FROM documents WHERE id = %s", [replaced])
            try:
                row = self.db.execute(
                    """INSERT INTO documents (path, title, format, sha256, size, mtime_ns, pages,
                                              chunks, note, indexed_at)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, 0, %s, %s)
                       ON CONFLICT (path) DO NOTHING RETURNING id""",
                    document.row(),
                ).fetchone()
            except psycopg.errors.InsufficientPrivilege:
                row = None  # the folder grants refused it (WITH CHECK)
            if row is None:  # the path's lock is held: only a row hidden from us is there
                raise NotReadable(f"{document.path}: not in a folder this role may index")
            document_id = int(row[0])
            count, tokens = self.insert_chunks(document_id, list(chunks))
            self.db.execute(
                "UPDATE documents SET chunks = %s, tokens = %s WHERE id = %s",
                [count, tokens, document_id],
            )
            with self.db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO ocr_pages (document_id, page) VALUES (%s, %s)",
                    [(document_id, page) for page in document.ocr_pages],
                )
            version = self.bump_index_version()
        return Written(document_id, replaced, version)

    def _same_file(self, document_id: int, document: NewDocument) -> bool:
        row = self.db.execute(
            "SELECT size, pages FROM documents WHERE id = %s", [document_id]
        ).fetchone()
        return row is not None and (row[0], row[1]) == (document.size, document.pages)

    def insert_chunks(self, document_id: int, chunks: Sequence[Chunk]) -> tuple[int, int]:
        """(chunks, keyword terms) inserted."""
        if not chunks:
            return 0, 0
        terms = self._terms.of([embedding_text(c.heading, c.text) for c in chunks])
        with self.db.cursor() as cursor:
            cursor.executemany(
                """INSERT INTO chunks (document_id, ordinal, page, page_label, heading, text,
                                       terms, length)
                   VALUES (%s, %s, %s, %s, %s, %s, %s::tsvector, %s)""",
                [
                    (document_id, c.ordinal, c.page, c.page_label, c.heading, c.text, vector, n)
                    for c, (vector, n) in zip(chunks, terms, strict=True)
                ],
            )
        return len(chunks), sum(n for _, n in terms)

    def remove_document(self, document_id: int) -> int | None:
        with self.db.transaction():
            deleted = self.db.execute("DELETE FROM documents WHERE id = %s", [document_id])
            if not deleted.rowcount:
                return None
            return self.bump_index_version()

    def bump_index_version(self) -> int:
        """Last in each write transaction: the row stays locked only until its commit."""
        return int(
            self._value(
                """INSERT INTO meta (key, value) VALUES ('index_version', '1')
                   ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text
                   RETURNING value"""
            )
        )

    def index_version(self) -> int:
        return int(self._get_meta("index_version") or 0)

    def _get_meta(self, key: str) -> str | None:
        value = self._value("SELECT value FROM meta WHERE key = %s", [key])
        return None if value is None else str(value)

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, value],
        )

    def page_to_show(self, path: str, page: int) -> PageToShow:
        """Refused for a path that is no document this role may read: a shared library shows
        no page of a file its grants hide, even where this machine could open the file."""
        row = self.db.execute(_pg(PAGE_TO_SHOW), [page, path]).fetchone()
        if row is None:
            raise NotReadable(f"{path}: not a document of the shared library this role may read")
        return page_shown(row)

    # --- OCR -------------------------------------------------------------------------------

    def next_ocr_page(self) -> OcrPending | None:
        row = self.db.execute(NEXT_OCR_PAGE).fetchone()
        return OcrPending(*row) if row else None

    def ocr_progress(self, document_id: int) -> tuple[int, int]:
        row = self.db.execute(
            "SELECT count(words), count(*) FROM ocr_pages WHERE document_id = %s", [document_id]
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def write_ocr_page(
        self, document_id: int, page: int, chunks: Sequence[Chunk], words: Sequence[Any]
    ) -> int | None:
        with self.db.transaction():
            updated = self.db.execute(
                "UPDATE ocr_pages SET words = %s WHERE document_id = %s AND page = %s "
                "AND words IS NULL",
                [json.dumps(list(words), ensure_ascii=False), document_id, page],
            )
            if not updated.rowcount:
                return None
            start = int(
                self._value(
                    "SELECT coalesce(max(ordinal) + 1, 0) FROM chunks WHERE document_id = %s",
                    [document_id],
                )
            )
            appended = [replace(c, ordinal=start + i) for i, c in enumerate(chunks)]
            count, tokens = self.insert_chunks(document_id, appended)
            self.db.execute(
                "UPDATE documents SET chunks = chunks + %s, tokens = tokens + %s WHERE id = %s",
                [count, tokens, document_id],
            )
            self.db.execute("DELETE FROM summaries WHERE document_id = %s", [document_id])
            return self.bump_index_version()

    # --- search ----------------------------------------------------------------------------

    def keyword_search(
        self, terms: Sequence[str], limit: int, document_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25) best first, bm25 lower-is-better: FTS5's bm25() on its own terms."""
        if not terms:
            return []
        frequency = self._document_frequency([index_form(term) for term in terms])
        chosen = selective_terms(terms, frequency) if len(terms) >= 3 else list(terms)
        lexemes = list(dict.fromkeys(index_form(term) for term in chosen))
        found = [lexeme for lexeme in lexemes if frequency.get(lexeme)]
        if not found:
            return []
        row = self.db.execute("SELECT sum(chunks), sum(tokens) FROM documents").fetchone()
        assert row is not None
        total, tokens = int(row[0] or 0), int(row[1] or 0)
        average = tokens / total if total else 1.0

        def idf(hits: int) -> float:  # FTS5's: never zero or below
            value = math.log((total - hits + 0.5) / (hits + 0.5))
            return value if value > 0 else 1e-6

        scope = "" if document_ids is None else "AND c.document_id = ANY(%(scope)s)"
        rows = self._rows(
            f"""SELECT c.id, -sum(q.idf * cardinality(u.positions) * (%(k1)s + 1)
                       / (cardinality(u.positions)
                          + %(k1)s * (1 - %(b)s + %(b)s * c.length / %(average)s))) AS score
                FROM chunks c
                CROSS JOIN LATERAL unnest(c.terms) AS u
                JOIN unnest(%(lexemes)s::text[], %(idfs)s::float8[]) AS q(lexeme, idf)
                  ON q.lexeme = u.lexeme
                WHERE c.terms @@ %(query)s::tsquery {scope}
                GROUP BY c.id ORDER BY score, c.id LIMIT %(limit)s""",
            {
                "k1": BM25_K1,
                "b": BM25_B,
                "average": average,
                "lexemes": found,
                "idfs": [idf(frequency[lexeme]) for lexeme in found],
                "query": " | ".join(map(quoted, found)),
                "scope": list(document_ids or []),
                "limit": limit,
            },
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def _document_frequency(self, lexemes: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each term (counted on the GIN index)."""
        unique = list(dict.fromkeys(lexemes))
        rows = self._rows(
            """SELECT q.lexeme, (SELECT count(*) FROM chunks WHERE terms @@ q.query::tsquery)
               FROM unnest(%s::text[], %s::text[]) AS q(lexeme, query)""",
            [unique, [quoted(lexeme) for lexeme in unique]],
        )
        return {str(lexeme): int(count) for lexeme, count in rows}

    def vector_search(
        self, query: np.ndarray, limit: int, document_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) best first, from the HNSW index on the server."""
        dimension = self._vector_dimension()
        if dimension is None:
            return []
        typed = f"vector({dimension})"
        scope = "" if document_ids is None else "WHERE document_id = ANY(%(scope)s)"
        rows = self._rows(
            f"""SELECT chunk_id, 1 - (embedding::{typed} <=> %(query)s::{typed}) FROM vectors
                {scope} ORDER BY embedding::{typed} <=> %(query)s::{typed} LIMIT %(limit)s""",
            {
                "query": np.asarray(query, dtype=np.float32),
                "scope": list(document_ids or []),
                "limit": limit,
            },
        )
        # An iterative scan may return neighbours slightly out of order.
        return sorted(((int(r[0]), float(r[1])) for r in rows), key=lambda hit: -hit[1])

    def has_vectors(self) -> bool:
        return bool(self._value("SELECT EXISTS (SELECT 1 FROM vectors)"))

    def chunks(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        if not ids:
            return {}
        rows = self._rows(f"{CHUNK_ROWS} WHERE c.id = ANY(%s)", [list(ids)])
        return {int(row[0]): StoredChunk(*row) for row in rows}

    def page_chunks(self, document_id: int, page: int) -> list[StoredChunk]:
        rows = self._rows(
            f"{CHUNK_ROWS} WHERE c.document_id = %s AND c.page = %s ORDER BY c.ordinal",
            [document_id, page],
        )
        return [StoredChunk(*row) for row in rows]

    def document_chunks(self, document_id: int) -> list[StoredChunk]:
        rows = self._rows(
            f"{CHUNK_ROWS} WHERE c.document_id = %s ORDER BY c.page, c.ordinal", [document_id]
        )
        return [StoredChunk(*row) for row in rows]

    # --- summaries -------------------------------------------------------------------------

    def summary(self, document_id: int, part: str, version: str) -> str | None:
        value = self._value(
            "SELECT summary FROM summaries WHERE document_id = %s AND part = %s AND sha256 = %s",
            [document_id, part, version],
        )
        return None if value is None else str(value)

    def save_summary(
        self, document_id: int, part: str, version: str, summary: str, *, replace: bool = True
    ) -> bool:
        with self.db.transaction():
            # The document's row, locked: its text cannot change under the check.
            self.db.execute("SELECT 1 FROM documents WHERE id = %s FOR UPDATE", [document_id])
            current = self.document(document_id)
            if current is None or text_version(current) != version:
                return False
            if not replace and self.summary(document_id, part, version) is not None:
                return False
            self.db.execute(
                """INSERT INTO summaries (document_id, part, sha256, summary, made_at)
                   VALUES (%s, %s, %s, %s, %s)
                   ON CONFLICT (document_id, part) DO UPDATE SET sha256 = excluded.sha256,
                     summary = excluded.summary, made_at = excluded.made_at""",
                [document_id, part, version, summary, datetime.now(UTC).isoformat()],
            )
        return True

    # --- embeddings ------------------------------------------------------------------------

    def pending_embeddings(self, limit: int) -> list[tuple[int, int, str]]:
        rows = self._rows(
            """SELECT c.id, c.document_id, c.heading, c.text FROM chunks c
               WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)
               ORDER BY c.id LIMIT %s""",
            [limit],
        )
        return [(int(r[0]), int(r[1]), embedding_text(r[2], r[3])) for r in rows]

    def count_pending_embeddings(self) -> int:
        return int(
            self._value(
                """SELECT count(*) FROM chunks c
                   WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)"""
            )
        )

    def save_vectors(self, ids: Sequence[int], vectors: np.ndarray) -> tuple[list[int], int]:
        """Store vectors for chunks that still exist; the ids stored and the new version."""
        vectors = np.asarray(vectors, dtype=np.float32)
        with self.db.transaction():
            if len(ids):
                self.ensure_vector_index(int(vectors.shape[1]))
            stored = []
            for chunk_id, vector in zip(ids, vectors, strict=True):
                row = self.db.execute(
                    """INSERT INTO vectors (chunk_id, document_id, embedding)
                       SELECT id, document_id, %s FROM chunks WHERE id = %s
                       ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding
                       RETURNING chunk_id""",
                    [vector, chunk_id],
                ).fetchone()
                if row is not None:
                    stored.append(chunk_id)
            version = self.bump_index_version()
        return stored, version

    def _vector_dimension(self) -> int | None:
        if self._dimension is None:
            value = self._get_meta(DIMENSION_KEY)
            self._dimension = int(value) if value else None
        return self._dimension

    def ensure_vector_index(self, dimension: int) -> None:
        """The HNSW index for the embedder's dimension, made by the first desktop to embed."""
        if self._vector_dimension() == dimension:
            return
        self.db.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
        self.db.execute(
            f"""CREATE INDEX IF NOT EXISTS vectors_hnsw_{dimension} ON vectors
                USING hnsw ((embedding::vector({dimension})) vector_cosine_ops)"""
        )
        self._set_meta(DIMENSION_KEY, str(dimension))
        self._dimension = dimension

    def claim_embeddings(self, model: str) -> str:
        """The library's embedding model: `model` where it had none yet. Unlike
        `reset_embeddings`, never drops vectors: a shared library's are every desk's, and a
        desk set up with another model must not wipe them (nor the next desk wipe its own)."""
        if (stored := self._get_meta(EMBEDDING_MODEL_KEY)) is not None:
            return str(stored)
        with self.db.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
            if (stored := self._get_meta(EMBEDDING_MODEL_KEY)) is not None:
                return str(stored)
            self._set_meta(EMBEDDING_MODEL_KEY, model)
            return model

    def reset_embeddings(self, model: str) -> None:
        """Drop vectors made by another embedding model: they are not comparable."""
        if self._get_meta(EMBEDDING_MODEL_KEY) == model:
            return
        with self.db.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", [SCHEMA_LOCK])
            if self._get_meta(EMBEDDING_MODEL_KEY) == model:
                return
            self.db.execute("DELETE FROM vectors")
            if (dimension := self._get_meta(DIMENSION_KEY)) is not None:
                self.db.execute(f"DROP INDEX IF EXISTS vectors_hnsw_{int(dimension)}")
                self.db.execute("DELETE FROM meta WHERE key = %s", [DIMENSION_KEY])
            self._dimension = None
            self._set_meta(EMBEDDING_MODEL_KEY, model)
            self.bump_index_version()
