"""A folder's queue outlives the intake: paused or stopped mid-folder, a new intake on the same
library (the next start) goes on where it stopped, and every file is read exactly once."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from subprocess import PIPE

import pytest

import app.intake.progress as progress_module
from app.documents.reader import DocumentReader, ReadLimits
from app.index import EmbeddingProgress, Library, QueuedFile
from app.intake import (
    FileIndexed,
    FileSkipped,
    FileStarted,
    Idle,
    IndexingProgress,
    Intake,
    IntakeEvent,
    PauseChanged,
)
from app.processes import process_identity
from app.settings import LibrarySettings
from tests.integration.conftest import opened, run

FILES = 24


def write_folder(folder: Path) -> list[Path]:
    folder.mkdir()
    files = []
    for number in range(FILES):
        path = folder / f"note-{number:02}.md"
        path.write_text(
            f"# Note {number}\n\n"
            + "\n\n".join(
                f"Paragraph {p} of note {number}: boats leave at dusk." for p in range(40)
            ),
            encoding="utf-8",
        )
        files.append(path)
    return files


@contextlib.asynccontextmanager
async def session(database: Path) -> AsyncIterator[Intake]:
    """One run of the app on `database`: its library, readers and intake, closed at the end."""
    library = Library(database, None)
    await library.open()
    limits = ReadLimits.from_settings(LibrarySettings())
    reader, ocr_reader = DocumentReader(limits), DocumentReader(limits, name="ocr")
    intake = Intake(library, reader, ocr_reader)
    try:
        yield intake
    finally:
        await intake.close()
        await reader.close()
        await ocr_reader.close()
        await library.close()


async def until(events: AsyncIterator[IntakeEvent], wanted: type, count: int = 1) -> list:
    """Every event up to the `count`th of type `wanted`."""
    seen = []
    async for event in events:
        seen.append(event)
        if sum(isinstance(e, wanted) for e in seen) == count:
            return seen
    raise AssertionError("the events ended")


def indexed(events: list) -> list[str]:
    return [event.path.name for event in events if isinstance(event, FileIndexed)]


def test_a_paused_folder_stays_paused_across_restarts_and_then_reads_every_file_once(
    tmp_path: Path,
) -> None:
    files = write_folder(tmp_path / "folder")
    database = tmp_path / "library.sqlite3"

    async def scenario() -> None:
        async with session(database) as intake:  # the first run: paused after a few files
            with intake.subscribe() as events:
                intake.add([tmp_path / "folder"])
                first = await until(events, FileIndexed, 3)
                await intake.pause()
                first += await until(events, PauseChanged)
        assert first[-1].paused
        assert 0 < first[-1].waiting < FILES

        async with session(database) as intake:  # still paused after a restart
            with intake.subscribe() as events:
                await intake.resume()
                held = await until(events, IndexingProgress)
            assert held[0] == PauseChanged(True, held[0].waiting)
            assert intake.paused
            # The resumed batch says how far it is, then waits at the pause before any file.
            progress = held[-1]
            assert progress.total == FILES
            assert progress.done == FILES - held[0].waiting
            assert not [e for e in held if isinstance(e, FileStarted)]

        async with session(database) as intake:  # the user resumes on the next run
            with intake.subscribe() as events:
                await intake.resume()
                await intake.unpause()
                second = await until(events, Idle)
            assert not intake.paused
            assert await intake.library.queue_paused() is False
            assert (await intake.library.queue()).left == []
            documents = await intake.library.documents()

        read_first, read_second = indexed(first), indexed(second)
        assert not set(read_first) & set(read_second)  # no file read twice
        assert sorted(read_first + read_second) == [f.name for f in files]
        assert len(documents) == FILES
        # The files marked done before the pause are not even looked at again.
        started = [e.position for e in second if isinstance(e, FileStarted)]
        assert started[0] == progress.done + 1
        assert started[-1] == FILES
        skipped = [e for e in second if isinstance(e, FileSkipped)]
        assert all(e.path.name in read_first for e in skipped)

    run(scenario())


def test_a_run_stopped_mid_folder_is_continued_by_the_next_start(tmp_path: Path) -> None:
    files = write_folder(tmp_path / "folder")
    database = tmp_path / "library.sqlite3"

    async def scenario() -> None:
        async with session(database) as intake:  # quit (not paused) after a few files
            with intake.subscribe() as events:
                intake.add([tmp_path / "folder"])
                first = await until(events, FileIndexed, 4)

        async with session(database) as intake:
            with intake.subscribe() as events:
                await intake.resume()
                second = await until(events, Idle)
            documents = await intake.library.documents()

        read_first, read_second = indexed(first), indexed(second)
        assert not set(read_first) & set(read_second)
        assert sorted(read_first + read_second) == [f.name for f in files]
        assert sorted(d.name for d in documents) == [f.name for f in files]

    run(scenario())


def test_progress_comes_after_every_file_and_reaches_the_whole_folder(tmp_path: Path) -> None:
    write_folder(tmp_path / "folder")

    async def scenario() -> list[IntakeEvent]:
        async with session(tmp_path / "library.sqlite3") as intake:
            return [event async for event in intake.index([tmp_path / "folder"])]

    events = run(scenario())
    progress = [event for event in events if isinstance(event, IndexingProgress)]
    files_done = [p.done for p in progress]
    assert files_done == sorted(files_done)
    assert progress[-1].done == progress[-1].total == FILES
    assert progress[-1].pages_per_s is not None
    assert progress[-1].pages_per_s > 0


def test_a_first_folders_time_left_includes_embedding_measured_as_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new library knows no embedding speed, and embedding is most of a folder's time: the
    intake embeds a few batches once it estimates (real work, the real embedder), keeps the
    speed, and the time left counts the pass from then on."""
    monkeypatch.setattr(progress_module, "MIN_SECONDS", 0.0)  # any reading speed estimates
    write_folder(tmp_path / "folder")

    async def scenario() -> tuple[list[IntakeEvent], float | None]:
        async with opened() as docent:
            events = [e async for e in docent.intake.index([tmp_path / "folder"], embed=True)]
            return events, await docent.library.embedding_speed()

    events, kept = run(scenario())
    reading = [e for e in events if isinstance(e, IndexingProgress) and e.stage == "reading"]
    estimated = [p for p in reading if p.eta_s is not None]
    assert estimated
    # Measured before the first estimate: none says "…, then embedding".
    assert not any(p.embedding_after for p in estimated)
    assert kept is not None
    assert kept > 0
    embedded = [e for e in events if isinstance(e, EmbeddingProgress)]
    assert embedded[-1].done == embedded[-1].total  # the pass finished what the sample left


def test_a_file_another_running_docent_is_reading_is_left_to_it_until_that_process_ends(
    tmp_path: Path,
) -> None:
    """The window and `docent index --resume` on one library never read the same stored file
    at once: a file claimed by another running process is skipped (and stays queued, its to
    finish); once that process has ended, its claim is taken over."""
    files = write_folder(tmp_path / "folder")[:6]
    database = tmp_path / "library.sqlite3"
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=PIPE)
    try:
        claimed = str(files[2])

        async def first_run() -> list[IntakeEvent]:
            async with session(database) as intake:
                await intake.library.queue_files([QueuedFile(str(f), None, False) for f in files])
                assert (
                    await intake.library.claim_queued(claimed, process_identity(other.pid)) is None
                )
                with intake.subscribe() as events:
                    await intake.resume()
                    return await until(events, Idle)

        events = run(first_run())
        skipped = [e for e in events if isinstance(e, FileSkipped)]
        assert [(e.path, e.reason) for e in skipped] == [
            (files[2], f"being indexed by another Docent process (pid {other.pid})")
        ]
        assert sorted(indexed(events)) == sorted(f.name for f in files if f != files[2])
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(timeout=30)

    async def second_run() -> tuple[list[IntakeEvent], list[QueuedFile]]:
        async with session(database) as intake:
            assert [f.path for f in (await intake.library.queue()).left] == [claimed]
            with intake.subscribe() as events:
                await intake.resume()
                seen = await until(events, Idle)
            return seen, (await intake.library.queue()).left

    events, left = run(second_run())
    assert indexed(events) == [files[2].name]  # the ended process's claim, taken over
    assert left == []
