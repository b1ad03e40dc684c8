"""The reader process under stress: a document that takes too long or too much memory, or that
crashes the reader, fails alone with its reason; the next one is read by a fresh reader; and no
reader outlives the app that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from app.documents.reader import ReadLimits
from app.intake import FileFailed, FileIndexed, IntakeEvent, PagesParsed
from app.processes import BACKGROUND_NICENESS
from tests.conftest import REPO
from tests.documents import write_long_pdf, write_pdf
from tests.hostile import write_bomb_epub
from tests.integration.conftest import opened, run


def reader_processes(besides: frozenset[int] = frozenset()) -> list[psutil.Process]:
    """This process's reader children, except those in `besides` (left by a failed test)."""
    return [
        child
        for child in psutil.Process().children(recursive=True)
        if "app.documents.worker" in child.cmdline() and child.pid not in besides
    ]


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        # No unpacked-size limit: MuPDF lays out 200 MB of XHTML (it ran for 87 minutes).
        (
            ReadLimits(timeout_s=2, memory_bytes=8 << 30, max_unpacked_bytes=1 << 40),
            "took longer than 2 s to read",
        ),
        (
            ReadLimits(timeout_s=600, memory_bytes=256 << 20, max_unpacked_bytes=1 << 40),
            "needed more than 256 MB of memory to read",
        ),
    ],
)
def test_a_document_over_a_limit_fails_alone(
    limits: ReadLimits, reason: str, tmp_path: Path
) -> None:
    bomb = write_bomb_epub(tmp_path / "bomb.epub", 200)
    after = write_pdf(tmp_path / "after.pdf")

    async def scenario() -> list[IntakeEvent]:
        async with opened(embeddings=False) as docent:
            docent.reader.limits = limits
            events = [e async for e in docent.intake.index([bomb, after])]
            return [e for e in events if isinstance(e, FileFailed | FileIndexed)]

    failed, indexed = run(scenario())
    assert failed == FileFailed(bomb, reason)
    assert isinstance(indexed, FileIndexed)
    assert indexed.path == after


def test_a_reader_crash_fails_that_document_and_the_next_one_is_read(tmp_path: Path) -> None:
    big = write_long_pdf(tmp_path / "big.pdf", pages=600)
    after = write_pdf(tmp_path / "after.pdf")
    earlier = frozenset(reader.pid for reader in reader_processes())

    async def scenario() -> tuple[list[IntakeEvent], list[str], bool]:
        events: list[IntakeEvent] = []
        crashed: list[int] = []
        async with opened(embeddings=False) as docent:
            async for event in docent.intake.index([big, after]):
                events.append(event)
                if isinstance(event, PagesParsed) and event.path == big and not crashed:
                    (reader,) = reader_processes(earlier)
                    crashed.append(reader.pid)
                    os.kill(reader.pid, signal.SIGSEGV)  # as MuPDF crashing on a page would
            names = [d.name for d in await docent.library.documents()]
            (fresh,) = reader_processes(earlier)
            return events, names, fresh.pid != crashed[0]

    events, names, restarted = run(scenario())
    outcomes = {e.path.name: e for e in events if isinstance(e, FileFailed | FileIndexed)}
    assert outcomes["big.pdf"] == FileFailed(big, "crashed the PDF reader")
    assert isinstance(outcomes["after.pdf"], FileIndexed)
    assert names == ["after.pdf"]
    assert restarted  # a new reader read after.pdf
    assert not reader_processes(earlier)  # closing Docent stopped it


def test_no_reader_outlives_an_app_killed_mid_document(tmp_path: Path) -> None:
    big = write_long_pdf(tmp_path / "big.pdf", pages=2000)
    app = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.integration.index_worker",
            str(tmp_path / "library.sqlite3"),
            str(big),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert app.stdout is not None
    for line in app.stdout:  # the reader is well into the document
        if line.startswith("pages big.pdf"):
            break
    (reader,) = [
        child
        for child in psutil.Process(app.pid).children()
        if "app.documents.worker" in child.cmdline()
    ]
    app.kill()
    app.wait(timeout=30)
    app.stdout.close()
    _, alive = psutil.wait_procs([reader], timeout=30)
    assert not alive, "the reader kept running after the app was killed"


def test_indexing_reads_in_the_background_and_a_preview_does_not(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "a.pdf")

    async def scenario() -> dict[bool, int]:
        async with opened(embeddings=False) as docent:
            await docent.reader.start()
            await docent.render_page(pdf, 1)  # the preview's own reader
            return {"--background" in c.cmdline(): c.nice() for c in reader_processes()}

    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert run(scenario()) == {True: min(ours + BACKGROUND_NICENESS, 19), False: ours}
