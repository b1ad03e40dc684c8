"""Watched folders against a real index and the real file system watcher (inotify here)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from app.bootstrap import Docent
from app.intake.watch import FolderChanges, FolderWatch
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run


def test_pending_finds_what_changed_while_docent_was_closed(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    (folder / "sub").mkdir(parents=True)
    report = write_pdf(folder / "report.pdf")
    notes = folder / "sub" / "notes.md"
    notes.write_text("# Notes\n\nInvoices are kept seven years.\n")
    kept = folder / "kept.txt"
    kept.write_text("Unchanged.\n")
    elsewhere = tmp_path / "elsewhere.txt"  # indexed, but outside the watched folder
    elsewhere.write_text("Not watched.\n")

    async def scenario() -> tuple[FolderChanges, FolderChanges]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [folder, elsewhere])
            watch = FolderWatch(docent.library, [folder])
            try:
                before = await watch.pending()
                # Docent is "closed": a file changes, one goes, one arrives, two never count.
                notes.write_text("# Notes\n\nInvoices are kept ten years.\n")
                report.unlink()
                elsewhere.unlink()
                (folder / "new.md").write_text("# New\n")
                (folder / ".hidden.md").write_text("# Hidden\n")
                (folder / "song.mp3").write_bytes(b"ID3")  # not a document
                return before, await watch.pending()
            finally:
                watch.close()

    before, after = run(scenario())
    assert not before
    assert after.index == [folder / "new.md", folder / "sub" / "notes.md"]
    assert after.remove == [str(report)]
    assert after.describe() == "2 to index, 1 removed"


@contextlib.asynccontextmanager
async def following(docent: Docent, folder: Path) -> AsyncIterator[asyncio.Queue[FolderChanges]]:
    """The watcher's batches, once it follows the folder."""
    watch = FolderWatch(docent.library, [folder])
    batches: asyncio.Queue[FolderChanges] = asyncio.Queue()

    async def pump() -> None:
        async for changes in watch.changes():
            batches.put_nowait(changes)

    task = asyncio.ensure_future(pump())
    try:
        await asyncio.wait_for(watch.ready.wait(), 20)
        yield batches
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        watch.close()


async def next_batch(batches: asyncio.Queue[FolderChanges]) -> FolderChanges:
    return await asyncio.wait_for(batches.get(), 20)


def test_live_changes_arrive_as_index_work(tmp_path: Path) -> None:
    folder = tmp_path / "watched"
    (folder / "project").mkdir(parents=True)
    plan = folder / "project" / "plan.md"
    plan.write_text("# Plan\n")

    async def scenario() -> list[FolderChanges]:
        async with opened(embeddings=False) as docent, following(docent, folder) as batches:
            await index_all(docent, [folder])
            seen = []
            added = write_pdf(tmp_path / "report.pdf")
            os.replace(added, folder / "report.pdf")  # arrives whole, as a finished copy does
            seen.append(await next_batch(batches))
            await index_all(docent, seen[-1].index)
            (folder / "report.pdf").unlink()
            seen.append(await next_batch(batches))
            shutil.move(folder / "project", tmp_path / "archived")  # a folder moved away
            seen.append(await next_batch(batches))
            return seen

    added, deleted, moved = run(scenario())
    assert added.index == [folder / "report.pdf"]
    assert not added.remove
    assert deleted.remove == [str(folder / "report.pdf")]
    assert moved.remove == [str(plan)]


def test_links_out_of_a_watched_folder_are_skipped_live_and_at_start_up(tmp_path: Path) -> None:
    """A link to a folder outside, made while Docent watches, once indexed what it pointed to
    (and the next start-up scan removed it again): both now apply one rule."""
    folder = tmp_path / "watched"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNever indexed.\n")

    async def scenario() -> tuple[FolderChanges, FolderChanges]:
        async with opened(embeddings=False) as docent, following(docent, folder) as batches:
            (folder / "elsewhere").symlink_to(outside, target_is_directory=True)
            live = await next_batch(batches)
            watch = FolderWatch(docent.library, [folder])
            try:
                return live, await watch.pending()
            finally:
                watch.close()

    live, at_start_up = run(scenario())
    for changes in (live, at_start_up):
        assert not changes.index
        assert [path for path, _ in changes.skipped] == [folder / "elsewhere"]
        assert "a link to something outside" in changes.skipped[0][1]
