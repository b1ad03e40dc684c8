"""Docent's own child processes, started isolated; helper servers on 127.0.0.1: a free port for
one, and one run as a child process (started, awaited until it says it serves, stopped by PID)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


def own_module(module: str, *arguments: str) -> list[str]:
    """The command that runs one of Docent's modules in a child process, isolated (-I): the
    working folder, PYTHON* variables and the user's site-packages stay off its import path, so
    an `app/` folder where Docent was started (every Flask project has one) is never imported in
    place of Docent's, with the cloud keys in its environment. The packaged app takes the same
    arguments (ui.launcher)."""
    return [sys.executable, "-I", "-m", module, *arguments]


# Indexing (parsing, OCR, embedding) is background work: at this niceness it yields the cores to
# the window and to the answer being written (2 cores, 4 busy threads: the window's 10 ms timer
# was up to 58 ms late while a 100-page PDF was embedded).
BACKGROUND_NICENESS = 10


def lower_this_process() -> None:
    """Run the calling process, and the threads it starts from now on, in the background."""
    import psutil  # the reader processes have it loaded; the app's start-up does not

    process = psutil.Process()
    process.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS if psutil.WINDOWS else BACKGROUND_NICENESS)


def lower_this_thread() -> None:
    """Run the calling thread in the background, where the system schedules threads one by one
    (Linux); elsewhere only a whole process can be lowered, and the thread stays as it is."""
    if sys.platform == "linux":
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)


def child_folder() -> str:
    """The working folder of the processes Docent starts: the file system's root (it always
    exists, and holds no project), never the folder Docent happened to be started from."""
    return os.path.abspath(os.sep)


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(
    command: Sequence[str],
    ready: str,
    log: Path,
    *,
    environment: dict[str, str] | None = None,
    timeout_s: float = 60.0,
) -> Iterator[None]:
    """Run `command` until the block ends; enter the block once a line of its output contains
    `ready`. Its output is copied to `log` (and drained, so the pipe never fills)."""
    process = subprocess.Popen(
        list(command),
        cwd=child_folder(),
        env={**os.environ, **(environment or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    started = threading.Event()

    def drain() -> None:
        assert process.stdout is not None
        with log.open("wb") as copy:
            for line in process.stdout:
                copy.write(line)
                copy.flush()
                if ready.encode() in line:
                    started.set()
        started.set()  # the process ended: stop waiting, and report it below

    reader = threading.Thread(target=drain, name=f"{Path(command[0]).name}-log")
    reader.start()
    try:
        if not started.wait(timeout_s) or process.poll() is not None:
            raise RuntimeError(f"{' '.join(command[:3])} … did not start; see {log}")
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)
        reader.join()
        assert process.stdout is not None
        process.stdout.close()
