"""A whole folder of real, odd and hostile files dropped at once, in several orders: every good
file is indexed and searchable, every bad one fails alone with its specific reason, links lead
nowhere outside, what must not hang settles quickly, and neither the app nor its reader process
grows without bound."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.hostile import QUICK, Sizes, write_hostile_folder

# The reader is held to 1 GB; its memory is sampled every 50 ms, so allow it a little beyond.
READER_LIMIT_MIB = 1024 + 128
# The app never parses: a folder of hostile files may not cost it more than opening a library.
APP_LIMIT_MIB = 400


def index_in_a_fresh_app(database: Path, folder: Path) -> tuple[dict[str, dict], dict[str, float]]:
    finished = subprocess.run(
        [sys.executable, "-m", "tests.integration.index_worker", str(database), str(folder)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1500,
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


@pytest.mark.parametrize(
    ("sizes", "order"),
    [(Sizes(), None), (QUICK, 1), (QUICK, 2)],
    ids=["as-reported", "quick-shuffled-1", "quick-shuffled-2"],
)
def test_a_folder_of_hostile_files(sizes: Sizes, order: int | None, tmp_path: Path) -> None:
    folder = tmp_path / "dropped"
    cases = write_hostile_folder(folder, sizes, shuffle=order)
    database = tmp_path / "library.sqlite3"

    outcomes, peaks = index_in_a_fresh_app(database, folder)

    event = {"indexed": "FileIndexed", "failed": "FileFailed", "skipped": "FileSkipped"}
    assert set(outcomes) == {str(path) for path in cases}
    for path, case in cases.items():
        got = outcomes[str(path)]
        assert got["event"] == event[case.outcome], (case.name, got)
        if case.outcome == "indexed":
            assert case.note in (got["says"] or ""), (case.name, got)
        else:
            assert case.reason is not None
            assert case.reason.matches(got["says"]), (case.name, got)
        if case.within_s is not None:
            assert got["seconds"] < case.within_s, (case.name, got)

    connection = sqlite3.connect(database)
    try:
        indexed = {row[0] for row in connection.execute("SELECT path FROM documents")}
        texts = "\n".join(row[0] for row in connection.execute("SELECT text FROM chunks"))
        for path, case in cases.items():
            if case.outcome == "indexed":
                assert str(path) in indexed
            if case.outcome == "indexed" and case.phrase:
                found = connection.execute(
                    "SELECT count(*) FROM chunks JOIN documents d ON d.id = document_id "
                    "WHERE d.path = ? AND text LIKE ?",
                    [str(path), f"%{case.phrase}%"],
                ).fetchone()[0]
                assert found, f"{case.name}: {case.phrase!r} is not in its chunks"
    finally:
        connection.close()
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    assert passwd not in texts
    assert "Outside marker mongoose" not in texts
    assert peaks["reader_peak_rss_mib"] < READER_LIMIT_MIB
    assert peaks["peak_rss_mib"] < APP_LIMIT_MIB
