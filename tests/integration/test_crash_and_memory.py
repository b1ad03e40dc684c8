"""Indexing survives kill -9 mid-document, and memory stays flat on a 2,000-page PDF."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.documents import write_long_pdf, write_pdf


def start_worker(database: Path, *files: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.index_worker", str(database), *map(str, files)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_kill_9_mid_document_leaves_earlier_documents_and_no_partial_one(tmp_path: Path) -> None:
    database = tmp_path / "library.sqlite3"
    small = write_pdf(tmp_path / "small.pdf")
    first = start_worker(database, small)
    first.communicate(timeout=120)
    assert first.returncode == 0
    with sqlite3.connect(database) as connection:
        before = connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert before > 0

    big = write_long_pdf(tmp_path / "big.pdf", pages=600)
    worker = start_worker(database, big)
    assert worker.stdout is not None
    for line in worker.stdout:  # wait until the big document is well under way
        if line.startswith("pages big.pdf") and int(line.split()[2].split("/")[0]) >= 20:
            break
    else:
        raise AssertionError("the worker never reported progress on big.pdf")
    os.kill(worker.pid, signal.SIGKILL)
    assert worker.wait(timeout=60) == -signal.SIGKILL
    worker.stdout.close()

    connection = sqlite3.connect(database)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        connection.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        names = [row[0] for row in connection.execute("SELECT path FROM documents")]
        assert names == [str(small)]
        assert connection.execute("SELECT count(*) FROM chunks").fetchone()[0] == before
        assert connection.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == before
    finally:
        connection.close()

    # The library is usable after the crash: the big document indexes fully on a second run.
    again = start_worker(database, big)
    output, _ = again.communicate(timeout=300)
    assert again.returncode == 0
    assert "FileIndexed big.pdf" in output


def peak_rss_mib(database: Path, pdf: Path) -> float:
    worker = start_worker(database, pdf)
    output, _ = worker.communicate(timeout=600)
    assert worker.returncode == 0, output
    assert f"FileIndexed {pdf.name}" in output
    return float(output.rsplit("peak_rss_mib", 1)[1])


def test_memory_stays_bounded_on_a_2000_page_pdf(tmp_path: Path) -> None:
    short = peak_rss_mib(tmp_path / "a.sqlite3", write_long_pdf(tmp_path / "short.pdf", 200))
    long = peak_rss_mib(tmp_path / "b.sqlite3", write_long_pdf(tmp_path / "long.pdf", 2000))
    # Ten times the pages may not cost ten times the memory: streaming keeps it near flat.
    print(f"peak RSS: 200 pages {short:.0f} MiB, 2,000 pages {long:.0f} MiB")
    assert long - short < 40, f"200 pages: {short:.0f} MiB, 2,000 pages: {long:.0f} MiB"
