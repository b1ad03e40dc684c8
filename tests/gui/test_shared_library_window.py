"""The window on a shared library (a real PostgreSQL with pgvector, the integration tests'
fixture): another desktop's documents show in its panel as they commit."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import qasync

from app.bootstrap import Docent
from app.samples import sample_path
from tests.conftest import REPO
from tests.gui.conftest import close_window, open_window
from tests.gui.waiting import until
from tests.integration.conftest import postgres_server, shared_library

__all__ = ["postgres_server", "shared_library"]  # the fixtures, used here by name


def test_the_panel_shows_another_desk_s_documents_as_they_commit(
    loop: qasync.QEventLoop, shared_library: str, tmp_path: Path
) -> None:
    window = open_window(loop, Docent.from_environment(embeddings=False, library=shared_library))
    tea = sample_path("china-tea-primer.pdf")

    async def another_desk_indexes() -> None:
        # One coroutine: qasync drops callbacks still pending when run_until_complete returns.
        await window.start(welcome=False)
        if window.indexing is not None:
            await window.indexing
        assert window.documents.counts() == (0, 0)  # no guide added to a shared library
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "ui.launcher", "--library", shared_library, "index",
            "--no-embed", str(tea),
            cwd=REPO, env=os.environ | {"DOCENT_HOME": str(tmp_path / "other-desk")},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        output = asyncio.ensure_future(other.communicate())
        # Nothing of this window's asked for it: only the database's notification can.
        await until(window.documents.rows_changed, lambda: window.documents.counts() == (1, 1))
        _, errors = await output
        assert other.returncode == 0, errors

    try:
        loop.run_until_complete(another_desk_indexes())
    finally:
        close_window(loop, window)
