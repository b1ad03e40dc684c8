"""What Docent keeps (documents' text, history, settings, window state) only its user can read."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.paths import Paths
from app.settings import Settings
from tests.unit.test_answering import library_with_report
from ui.window.window_state import WindowState


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common default, under which plain mkdir and open give 0755 folders, 0644 files."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_docents_folders_are_private_new_or_left_by_an_older_version(tmp_path: Path) -> None:
    fresh = Paths.from_environment({"DOCENT_HOME": str(tmp_path / "new" / "docent")})
    fresh.create()
    folders = (fresh.config_dir, fresh.data_dir, fresh.cache_dir, fresh.models_dir)
    assert [mode(folder) for folder in (*folders, tmp_path / "new")] == [0o700] * 5

    shared_models = tmp_path / "models"
    older = Paths.from_environment(
        {"DOCENT_HOME": str(tmp_path / "older"), "DOCENT_MODELS_DIR": str(shared_models)}
    )
    for folder in (older.config_dir, older.data_dir, older.cache_dir, shared_models):
        folder.mkdir(parents=True)
    assert mode(older.data_dir) == 0o755
    older.create()
    assert [mode(f) for f in (older.config_dir, older.data_dir, older.cache_dir)] == [0o700] * 3
    assert mode(shared_models) == 0o755  # models may be shared: left as they are


def test_the_library_and_its_journal_files_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "library"

    async def modes_while_open() -> dict[str, int]:
        library = await library_with_report(folder / "library.sqlite3")
        try:  # -wal and -shm exist while the library is open
            return {f.name: mode(f) for f in (folder, *folder.iterdir())}
        finally:
            await library.close()

    assert asyncio.run(modes_while_open()) == {
        "library": 0o700,
        "library.sqlite3": 0o600,
        "library.sqlite3-wal": 0o600,
        "library.sqlite3-shm": 0o600,
    }


def test_settings_and_window_state_are_saved_private(tmp_path: Path) -> None:
    settings_file = tmp_path / "config" / "settings.json"
    window_file = tmp_path / "config" / "window.json"
    Settings().save(settings_file)
    assert (mode(settings_file.parent), mode(settings_file)) == (0o700, 0o600)
    window_file.write_text("{}")  # written by an older version: 0644
    WindowState(scope=["/docs/report.pdf"]).save(window_file)
    assert mode(window_file) == 0o600
    assert WindowState.load(window_file).scope == ["/docs/report.pdf"]
