"""Moving a library's documents between an embedded SQLite file and a shared PostgreSQL library
(either way, or between two of one kind): `docent library copy/export/import`.

What moves is what `DocumentStore` holds: each document's row, its chunks, their vectors, its
OCR'd pages (with their words) and its summaries. The person's own data (history,
conversations, the intake's queue) and the files themselves never move.

Each document is written in one transaction of the destination, so an interrupted copy leaves
whole documents only; run again, it skips every document whose content digest already matches
and writes the rest (a document's path is its identity: nothing is ever duplicated). At the end
both sides are read again and compared: the counts of documents, chunks, vectors, OCR'd pages
and summaries, and per document a SHA-256 digest of everything copied (`document_digest`).
Documents the destination held that the source does not are left as they were.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.documents import Chunk
from app.errors import DocentError
from app.index.shared import SharedLocation, redacted
from app.index.store import EMBEDDING_MODEL_KEY, Store
from app.settings import is_shared_url

# The document's own columns, in the order both stores' `documents` tables name them.
_DOCUMENT_COLUMNS = "path, title, format, sha256, size, mtime_ns, pages, chunks, note, indexed_at"


class TransferError(DocentError):
    """A copy could not start, or its verification found a difference."""


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """One document as both kinds of store hold it, ids left out (each side has its own)."""

    row: tuple[Any, ...]  # _DOCUMENT_COLUMNS
    chunks: list[Chunk]  # in ordinal order
    vectors: dict[int, np.ndarray]  # by chunk ordinal
    ocr_pages: list[tuple[int, str | None]]  # (page, words as JSON; None: not OCR'd yet)
    summaries: list[tuple[str, str, str, str]]  # (part, text version, summary, made_at)

    @property
    def path(self) -> str:
        return str(self.row[0])


@dataclass(frozen=True, slots=True)
class Copied:
    """Progress: `done` of `total` documents gone through (`skipped` of them already there)."""

    done: int
    total: int
    skipped: int
    path: str


@dataclass(slots=True)
class Counts:
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    ocr_pages: int = 0
    summaries: int = 0

    def add(self, document: StoredDocument) -> None:
        self.documents += 1
        self.chunks += len(document.chunks)
        self.vectors += len(document.vectors)
        self.ocr_pages += len(document.ocr_pages)
        self.summaries += len(document.summaries)


@dataclass(slots=True)
class Report:
    copied: int = 0
    skipped: int = 0  # already in the destination, digest for digest
    source: Counts = field(default_factory=Counts)
    destination: Counts = field(default_factory=Counts)  # of the source's documents
    others: int = 0  # documents only the destination holds (left alone)
    verified: bool = False


def document_digest(document: StoredDocument) -> str:
    """SHA-256 over the document's row, each chunk's place, heading and text with its vector's
    float32 bytes, each OCR'd page's words and each summary: equal only when all of it is."""
    digest = hashlib.sha256()

    def put(value: Any) -> None:
        digest.update(json.dumps(value, ensure_ascii=False).encode())
        digest.update(b"\n")

    put(list(document.row))
    for chunk in document.chunks:
        put([chunk.ordinal, chunk.page, chunk.page_label, chunk.heading, chunk.text])
        vector = document.vectors.get(chunk.ordinal)
        put(None if vector is None else hashlib.sha256(vector.tobytes()).hexdigest())
    put(document.ocr_pages)
    put(document.summaries)
    return digest.hexdigest()


class _Side:
    """One library's document tables, read and written in bulk (on the thread that opened it)."""

    def __init__(self, location: str, password: Callable[[], str | None] | None, create: bool):
        self.shared = is_shared_url(location)
        # Into an empty shared library, the HNSW index is built once at the end, in bulk
        # (3x faster than one insert at a time, measured at 10k chunks); meanwhile searches
        # there find no vectors.
        self.defer_vector_index = False
        self.name = redacted(location) if self.shared else location
        if self.shared:
            from app.index.postgres import PostgresStore  # psycopg loads only for a shared one

            self.postgres: Any = PostgresStore(SharedLocation(location, password))
            self.db: Any = self.postgres.db
        else:
            path = Path(location)
            if not create and not path.is_file():
                raise TransferError(f"no library file at {location}")
            self.sqlite = Store(path)
            self.db = self.sqlite.db

    def close(self) -> None:
        (self.postgres if self.shared else self.sqlite).close()

    def _rows(self, sql: str, parameters: list[Any] | tuple[Any, ...] = ()) -> list[Any]:
        if self.shared:
            sql = sql.replace("?", "%s")
        return list(self.db.execute(sql, parameters).fetchall())

    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", [key])
        return str(rows[0][0]) if rows else None

    def paths(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT path FROM documents ORDER BY id")]

    def read(self, path: str) -> StoredDocument | None:
        found = self._rows(f"SELECT id, {_DOCUMENT_COLUMNS} FROM documents WHERE path = ?", [path])
        if not found:
            return None
        document_id, *row = found[0]
        chunks = [
            Chunk(int(r[0]), int(r[1]), str(r[2]), r[3], str(r[4]))
            for r in self._rows(
                "SELECT ordinal, page, page_label, heading, text FROM chunks "
                "WHERE document_id = ? ORDER BY ordinal",
                [document_id],
            )
        ]
        column = "v.embedding" if self.shared else "v.vector"
        vectors = {
            int(ordinal): (
                # pgvector gives an untyped `vector` column as its Vector
                np.asarray(value.to_numpy(), dtype=np.float32)
                if self.shared
                else np.frombuffer(value, dtype=np.float32)
            )
            for ordinal, value in self._rows(
                f"SELECT c.ordinal, {column} FROM vectors v JOIN chunks c ON c.id = v.chunk_id "
                "WHERE c.document_id = ?",
                [document_id],
            )
        }
        ocr_pages = [
            (int(page), words)
            for page, words in self._rows(
                "SELECT page, words FROM ocr_pages WHERE document_id = ? ORDER BY page",
                [document_id],
            )
        ]
        summaries = [
            (str(r[0]), str(r[1]), str(r[2]), str(r[3]))
            for r in self._rows(
                "SELECT part, sha256, summary, made_at FROM summaries WHERE document_id = ? "
                "ORDER BY part",
                [document_id],
            )
        ]
        return StoredDocument(tuple(row), chunks, vectors, ocr_pages, summaries)

    def use_embedding_model(self, model: str) -> None:
        """Vectors of another model are not comparable: the destination drops its own then."""
        (self.postgres if self.shared else self.sqlite).reset_embeddings(model)

    def write(self, document: StoredDocument) -> None:
        """Replace the document of this path by `document`, in one transaction."""
        if self.shared:
            self._write_postgres(document)
        else:
            self._write_sqlite(document)

    def _write_sqlite(self, document: StoredDocument) -> None:
        store = self.sqlite
        with store.writing():
            if old := store.db.execute(
                "SELECT id FROM documents WHERE path = ?", [document.path]
            ).fetchone():
                store.delete_document_rows(int(old[0]))
            cursor = store.db.execute(
                f"INSERT INTO documents ({_DOCUMENT_COLUMNS}) VALUES ({', '.join('?' * 10)})",
                list(document.row),
            )
            document_id = int(cursor.lastrowid or 0)
            if document.chunks:
                store.insert_chunks(document_id, document.chunks)
            ids = self._chunk_ids(document_id)
            connection = store.db.conn
            connection.executemany(
                "INSERT INTO vectors (chunk_id, vector) VALUES (?, ?)",
                [(ids[o], v.astype(np.float32).tobytes()) for o, v in document.vectors.items()],
            )
            self._write_pages_and_summaries(connection, document_id, document)
            store.bump_index_version()

    def _write_postgres(self, document: StoredDocument) -> None:
        store = self.postgres
        with store.db.transaction():
            # The lock PostgresStore.write_document takes: an indexing desktop waits its turn.
            store.db.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [document.path]
            )
            store.db.execute("DELETE FROM documents WHERE path = %s", [document.path])
            row = store.db.execute(
                f"INSERT INTO documents ({_DOCUMENT_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                list(document.row),
            ).fetchone()
            document_id = int(row[0])
            _, tokens = store.insert_chunks(document_id, document.chunks)
            store.db.execute(
                "UPDATE documents SET tokens = %s WHERE id = %s", [tokens, document_id]
            )
            ids = self._chunk_ids(document_id)
            if document.vectors and not self.defer_vector_index:
                store.ensure_vector_index(len(next(iter(document.vectors.values()))))
            with store.db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO vectors (chunk_id, document_id, embedding) VALUES (%s, %s, %s)",
                    [(ids[o], document_id, v) for o, v in document.vectors.items()],
                )
                self._write_pages_and_summaries(cursor, document_id, document)
            store.bump_index_version()

    def finish(self) -> None:
        """Build the vector index a copy put off (this run, or one killed before its end)."""
        if not self.shared:
            return
        row = self.db.execute("SELECT vector_dims(embedding) FROM vectors LIMIT 1").fetchone()
        if row is not None:
            with self.db.transaction():  # nothing to do when the index is there
                self.postgres.ensure_vector_index(int(row[0]))

    def _chunk_ids(self, document_id: int) -> dict[int, int]:
        rows = self._rows("SELECT ordinal, id FROM chunks WHERE document_id = ?", [document_id])
        return {int(ordinal): int(chunk_id) for ordinal, chunk_id in rows}

    def _write_pages_and_summaries(
        self, executor: Any, document_id: int, document: StoredDocument
    ) -> None:
        mark = "%s" if self.shared else "?"
        executor.executemany(
            f"INSERT INTO ocr_pages (document_id, page, words) VALUES ({mark}, {mark}, {mark})",
            [(document_id, page, words) for page, words in document.ocr_pages],
        )
        executor.executemany(
            "INSERT INTO summaries (document_id, part, sha256, summary, made_at) "
            f"VALUES ({mark}, {mark}, {mark}, {mark}, {mark})",
            [(document_id, *summary) for summary in document.summaries],
        )


def copy_library(
    source: str,
    destination: str,
    *,
    password: Callable[[str], str | None] | None = None,
    progress: Callable[[Copied], None] | None = None,
) -> Report:
    """Copy every document of `source` into `destination` (each a postgresql:// URL or a
    SQLite library file, made when missing), then verify; blocking, on the calling thread.
    `password(url)`: the keychain's password for a URL that holds none."""
    if source == destination:
        raise TransferError("the source and the destination are the same library")

    def keychain(location: str) -> Callable[[], str | None] | None:
        return None if password is None else (lambda: password(location))

    with (
        _opened(source, keychain(source), create=False) as reader,
        _opened(destination, keychain(destination), create=True) as writer,
    ):
        report = Report()
        if (model := reader.meta(EMBEDDING_MODEL_KEY)) is not None:
            writer.use_embedding_model(model)
        paths = reader.paths()
        writer.defer_vector_index = writer.shared and not writer.paths()
        for done, path in enumerate(paths, 1):
            document = reader.read(path)
            if document is None:  # removed meanwhile (someone is indexing the source)
                continue
            there = writer.read(path)
            if there is not None and document_digest(there) == document_digest(document):
                report.skipped += 1
            else:
                writer.write(document)
                report.copied += 1
            if progress is not None:
                progress(Copied(done, len(paths), report.skipped, path))
        writer.finish()
        _verify(reader, writer, report)
    return report


@contextlib.contextmanager
def _opened(
    location: str, password: Callable[[], str | None] | None, *, create: bool
) -> Iterator[_Side]:
    side = _Side(location, password, create)
    try:
        yield side
    finally:
        side.close()


def _verify(reader: _Side, writer: _Side, report: Report) -> None:
    """Read both sides again: the counts, and each document's digest, must be equal."""
    different = []
    for path in reader.paths():
        document = reader.read(path)
        if document is None:
            continue
        report.source.add(document)
        copy = writer.read(path)
        if copy is None or document_digest(copy) != document_digest(document):
            different.append(path)
        if copy is not None:
            report.destination.add(copy)
    report.others = len(set(writer.paths()) - set(reader.paths()))
    if different or report.source != report.destination:
        raise TransferError(
            f"verification failed: {len(different)} document(s) differ "
            f"(source {report.source}, destination {report.destination}); run the copy again"
        )
    report.verified = True
