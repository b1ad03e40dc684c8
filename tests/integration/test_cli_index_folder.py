"""`docent index` on a folder, as a user runs it: progress with pages/s and the time left,
Ctrl-C leaves the rest queued and says how to go on, `--resume` goes on."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, docent
from tests.documents import write_long_pdf

FILES = 40
# Printed at every tenth of the files (output redirected), once the time left can be told.
WITH_TIME_LEFT = re.compile(
    rf"^(\d+)/{FILES} files · [\d.]+ pages/s · (a few seconds|about \d+ (s|min)) left$",
    re.MULTILINE,
)
INDEXED = re.compile(r"^\[\d+/\d+\] indexed (\S+):", re.MULTILINE)


def test_progress_shows_the_time_left_and_ctrl_c_leaves_the_rest_queued(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    files = [write_long_pdf(folder / f"ledger-{n:02}.pdf", pages=100) for n in range(FILES)]

    with subprocess.Popen(
        [sys.executable, "-m", "ui.launcher", "index", "--no-embed", str(folder)],
        cwd=REPO,
        env=os.environ.copy(),
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stderr is not None
        before = ""
        for line in process.stderr:  # until the time left is shown, then Ctrl-C
            before += line
            if WITH_TIME_LEFT.match(line):
                process.send_signal(signal.SIGINT)
                break
        stopped = before + process.stderr.read()
    assert process.returncode == 130, stopped
    assert WITH_TIME_LEFT.search(stopped), stopped
    left = re.search(
        r"^Stopped: the other (\d+) files stay queued\. `docent index --resume`",
        stopped,
        re.MULTILINE,
    )
    assert left is not None, stopped
    assert 0 < int(left[1]) < FILES

    resumed = docent("index", "--resume", "--no-embed")
    assert resumed.returncode == 0, resumed.stderr
    first, then = INDEXED.findall(stopped), INDEXED.findall(resumed.stderr)
    assert not set(first) & set(then)  # no file read twice
    assert sorted(first + then) == [str(f) for f in files]
    # It went on from where the first run stopped (the files done in its last second are only
    # checked again, and skipped as unchanged), not from the first file.
    assert f"[1/{FILES}]" not in resumed.stderr
    assert f"[{FILES - int(left[1]) + 1}/{FILES}] indexed " in resumed.stderr
    assert re.search(rf"^{FILES}/{FILES} files · ", resumed.stderr, re.MULTILINE)

    again = docent("index", "--resume", "--no-embed")
    assert "No files were left queued." in again.stderr
