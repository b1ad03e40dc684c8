"""`docent bench gui`: the GUI thread's longest stall while the real model streams an answer and
a 100-page PDF indexes at the same time (<= 50 ms), and the time from launch to a usable window
(<= 1.0 s), next to a bare PySide6 window started the same way.

Stalls: a 10 ms precise QTimer runs on the GUI thread; any work that blocks that thread (parsing,
SQL, inference, a slow callback) makes a tick late, and the worst lateness is the stall.
Start: a fresh process per launch, timed from spawn to the window shown, started (library listed)
and painted; the file cache and Python's bytecode cache are warm, as on any launch after the first.

`--folder N`: instead, the longest stall while the window indexes the folder bench's N mixed
documents (app/bench/folder.py), from the drop until the library is fully searchable.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.bench.common import Measure, render, write_corpus
from app.bench.folder import write_folder
from app.bench.run import measures_payload, write_results
from app.bootstrap import Docent
from app.processes import own_module
from ui.main import open_window, run
from ui.tools.start_probe import USABLE
from ui.window.main_window import MainWindow

TICK_S = 0.010


@dataclass(frozen=True, slots=True)
class StallReport:
    longest_stall_ms: float
    p99_lateness_ms: float
    ticks: int
    tokens: int
    pages: int


class StallMeter:
    def __init__(self) -> None:
        self.lateness: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(int(TICK_S * 1000))
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def longest_and_p99_ms(self) -> tuple[float, float]:
        lateness = sorted(self.lateness) or [0.0]
        return lateness[-1] * 1000, lateness[int(0.99 * (len(lateness) - 1))] * 1000

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(max(0.0, now - self._last - TICK_S))
        self._last = now


async def measure(window: MainWindow, pdf: Path, question: str) -> StallReport:
    """Index `pdf` and answer `question` at once, through the window, timing the GUI thread."""
    tokens = 0

    def count() -> None:
        nonlocal tokens
        tokens += 1

    window.token_shown.connect(count)
    meter = StallMeter()
    meter.start()
    try:
        await asyncio.gather(window.add_paths([pdf], force=True), window.ask(question))
    finally:
        meter.stop()
        window.token_shown.disconnect(count)
    longest_ms, p99_ms = meter.longest_and_p99_ms()
    documents = await window.docent.library.documents()
    return StallReport(
        longest_stall_ms=longest_ms,
        p99_lateness_ms=p99_ms,
        ticks=len(meter.lateness),
        tokens=tokens,
        pages=sum(d.pages for d in documents if Path(d.path) == pdf),
    )


async def _run(pages: int, repeats: int) -> list[StallReport]:
    docent = Docent.from_environment()
    await docent.open()
    reports = []
    try:
        async with open_window(docent) as window:
            with tempfile.TemporaryDirectory(prefix="docent-bench-gui-") as folder:
                (pdf,) = write_corpus(Path(folder), documents=1, pages=pages)
                await window.add_paths([pdf])  # the question needs something to answer from
                await docent.desk.answerer()  # load the model before timing: it is not a GUI stall
                for _ in range(repeats):
                    reports.append(await measure(window, pdf, "How long must invoices be kept?"))
    finally:
        await docent.close()
    return reports


async def _run_folder(documents: int) -> list[Measure]:
    docent = Docent.from_environment()
    await docent.open()
    try:
        async with open_window(docent) as window:
            with tempfile.TemporaryDirectory(prefix="docent-bench-gui-") as folder:
                await _write_folder_elsewhere(Path(folder) / "folder", documents)
                meter = StallMeter()
                meter.start()
                try:
                    await window.add_paths([Path(folder) / "folder"])
                finally:
                    meter.stop()
    finally:
        await docent.close()
    longest_ms, p99_ms = meter.longest_and_p99_ms()
    return [
        Measure(
            f"longest GUI stall while indexing {documents:,} mixed documents",
            "ms",
            docent=[longest_ms],
            target="<= 50 ms",
        ),
        Measure("  p99 timer lateness", "ms", docent=[p99_ms]),
    ]


async def _write_folder_elsewhere(folder: Path, documents: int) -> None:
    """The bench's documents, written by another process: written here, python-docx's trees
    (in cycles) waited for the window's garbage collector, and freeing them was the longest
    stall at 1,000 documents (144–210 ms, the harness's own garbage, not the app's)."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as writer:
        await asyncio.get_running_loop().run_in_executor(writer, write_folder, folder, documents)


# The baseline: the least a PySide6 app does before its window is usable.
BARE_WINDOW = (
    "import sys\n"
    "from PySide6.QtWidgets import QApplication, QMainWindow\n"
    "app = QApplication(sys.argv[:1])\n"
    "window = QMainWindow()\n"
    "window.show()\n"
    "app.processEvents()\n"
    f"print({USABLE!r}, flush=True)\n"
)


def _as_a_user_launches() -> dict[str, str]:
    """A launch where Python caches bytecode, as it does by default: with PYTHONDONTWRITEBYTECODE
    set (as in some CI and sandbox images) every launch compiled each of Docent's modules again
    from source, a quarter of a second that no installed copy pays."""
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def time_to_usable(command: list[str]) -> float:
    """Seconds from spawning `command` until it prints USABLE; it must then exit cleanly."""
    started = time.perf_counter()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env=_as_a_user_launches()
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == USABLE:
                elapsed = time.perf_counter() - started
                break
        else:
            raise RuntimeError(f"{command} exited ({process.wait()}) before its window was usable")
        if process.wait(timeout=120):
            raise RuntimeError(f"{command} failed while closing: exit {process.returncode}")
    return elapsed


def bench_start(repeats: int) -> Measure:
    measure = Measure(
        "start to a usable window",
        "s",
        baseline_name="a bare PySide6 window",
        target="<= 1.0 s",
    )
    docent = own_module("ui.tools.start_probe")
    bare = [sys.executable, "-c", BARE_WINDOW]
    time_to_usable(docent)  # the first launch fills the caches (and is a first run)
    for attempt in range(repeats):
        pair = [(measure.docent, docent), (measure.baseline, bare)]
        for samples, command in pair if attempt % 2 == 0 else reversed(pair):
            samples.append(time_to_usable(command))
    return measure


def stall_measures(reports: list[StallReport]) -> list[Measure]:
    first = reports[0]
    return [
        Measure(
            f"longest GUI stall while streaming {first.tokens} tokens and indexing "
            f"{first.pages} pages",
            "ms",
            docent=[r.longest_stall_ms for r in reports],
            target="<= 50 ms",
        ),
        Measure("  p99 timer lateness", "ms", docent=[r.p99_lateness_ms for r in reports]),
    ]


def main(arguments: list[str]) -> int:
    quick = "--quick" in arguments
    out = Path(arguments[arguments.index("--out") + 1]) if "--out" in arguments else None
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    measures: list[Measure] = []
    if "--folder" in arguments:
        documents = int(arguments[arguments.index("--folder") + 1])
        print(f"GUI stalls while indexing {documents:,} mixed documents …", flush=True)

        async def stalls(app: QApplication) -> int:
            measures.extend(await _run_folder(documents))
            return 0

    else:
        print("start to a usable window …", flush=True)
        measures.append(bench_start(repeats=3 if quick else 7))
        print("GUI stalls while answering and indexing …", flush=True)

        async def stalls(app: QApplication) -> int:
            reports = await _run(pages=20 if quick else 100, repeats=1 if quick else 3)
            measures.extend(stall_measures(reports))
            return 0

    run(session=stalls)
    table = render(measures)
    print(f"\n## docent bench gui{' --quick' if quick else ''} — {stamp}\n")
    print(table)
    if out is not None:
        write_results(out, "gui", quick, stamp, measures_payload(measures)[0], table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
