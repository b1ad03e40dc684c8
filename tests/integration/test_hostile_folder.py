"""A whole folder of real, odd and hostile files dropped at once, in two orders: every good file
is indexed and searchable, every bad one fails alone with its specific reason, links lead
nowhere outside, and neither the app nor its reader process grows without bound."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.hostile_files import write_hostile_folder

# The reader is held to 1 GB; its memory is sampled every 50 ms, so allow it a little beyond.
READER_LIMIT_MIB = 1024 + 128
# The app never parses: dropping 40 hostile files may not cost it more than opening a library.
APP_LIMIT_MIB = 400


def index_in_a_fresh_app(database: Path, folder: Path) -> tuple[dict[str, dict], dict[str, float]]:
    finished = subprocess.run(
        [sys.executable, "-m", "tests.integration.index_worker", str(database), str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert finished.returncode == 0, finished.stderr
    outcomes = {}
    peaks = {}
    for line in finished.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "outcome":
            outcome = json.loads(rest)
            outcomes[outcome["path"]] = outcome
        elif kind.endswith("peak_rss_mib"):
            peaks[kind] = float(rest)
    return outcomes, peaks


@pytest.mark.parametrize("order", [None, 1, 2])
def test_a_folder_of_hostile_files(order: int | None, tmp_path: Path) -> None:
    folder = tmp_path / "dropped"
    cases = write_hostile_folder(folder, shuffle=order)
    database = tmp_path / "library.sqlite3"

    outcomes, peaks = index_in_a_fresh_app(database, folder)

    event = {"indexed": "FileIndexed", "failed": "FileFailed", "skipped": "FileSkipped"}
    assert set(outcomes) == {str(path) for path in cases}
    for path, expected in cases.items():
        got = outcomes[str(path)]
        assert got["event"] == event[expected.outcome], (path.name, got)
        if expected.outcome == "indexed":
            assert expected.note in (got["says"] or ""), (path.name, got)
        else:
            assert got["says"].startswith(expected.says), (path.name, got)

    connection = sqlite3.connect(database)
    try:
        indexed = {row[0] for row in connection.execute("SELECT path FROM documents")}
        texts = "\n".join(row[0] for row in connection.execute("SELECT text FROM chunks"))
        for path, expected in cases.items():
            if expected.outcome == "indexed":
                assert str(path) in indexed
                found = connection.execute(
                    "SELECT count(*) FROM chunks JOIN documents d ON d.id = document_id "
                    "WHERE d.path = ? AND text LIKE ?",
                    [str(path), f"%{expected.says}%"],
                ).fetchone()[0]
                assert found, f"{path.name}: {expected.says!r} is not in its chunks"
    finally:
        connection.close()
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    assert passwd not in texts
    assert "Outside marker mongoose" not in texts
    assert peaks["reader_peak_rss_mib"] < READER_LIMIT_MIB
    assert peaks["peak_rss_mib"] < APP_LIMIT_MIB
