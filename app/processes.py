"""Docent's own child processes, started isolated; helper servers on 127.0.0.1: a free port for
one, and one run as a child process (started, awaited until it says it serves, stopped by PID).

Native code that may crash on a user's machine (MuPDF, llama.cpp) runs in a child that speaks
JSON lines: requests on its stdin, messages on its stdout (`ChildProcess` on the app's side,
`open_channel` on the child's), so a crash costs one document or one answer, never the window.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

# What a child's pump puts in its queue once the child's output ends (it exited or crashed).
EXITED: dict[str, Any] = {"event": "exited"}
PARENT_CHECK_S = 1.0


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


def process_identity(pid: int | None = None) -> str:
    """ "pid:start time" of a running process (this one by default): a pid alone may be reused
    by another process once the first has ended."""
    import psutil  # not at start-up: the first queued file asks

    process = psutil.Process(pid)
    return f"{process.pid}:{process.create_time():.2f}"


def is_running(identity: str) -> bool:
    """Whether the process `identity` (process_identity) still runs, on this machine."""
    import psutil

    pid, _, _ = identity.partition(":")
    try:
        return process_identity(int(pid)) == identity
    except (ValueError, psutil.Error):
        return False


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


class ChildProcess:
    """One of Docent's modules in a child process (`own_module`), and a thread that turns the
    JSON lines it writes into `messages` (ending with EXITED)."""

    def __init__(self, module: str, *arguments: str) -> None:
        self.process = subprocess.Popen(
            own_module(module, *arguments),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=child_folder(),
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # no console on Windows
        )
        self.messages: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._usage: Any = None  # a psutil.Process, once memory is first asked for
        self._writing = threading.Lock()  # a cancel is sent from whichever thread cancels
        self._pump = threading.Thread(target=self._read, name=f"docent-{module}-pipe", daemon=True)
        self._pump.start()

    def _read(self) -> None:
        output: IO[bytes] | None = self.process.stdout
        assert output is not None
        for line in output:
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                self.messages.put({"event": "failed", "reason": "the child sent garbled output"})
        self.messages.put(EXITED)

    def send(self, request: dict[str, Any]) -> None:
        """Write one request; a child that died is reported by its EXITED message, not here."""
        stdin = self.process.stdin
        assert stdin is not None
        with self._writing, contextlib.suppress(BrokenPipeError, ValueError, OSError):
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()

    def next_message(self, timeout_s: float) -> dict[str, Any] | None:
        try:
            return self.messages.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def memory(self) -> int:
        import psutil  # with the first child, off the GUI thread: not at start-up

        try:
            self._usage = self._usage or psutil.Process(self.process.pid)
            return int(self._usage.memory_info().rss)
        except psutil.Error:
            return 0  # it just exited: the exit is reported next

    def stop(self, *, kill: bool) -> int | None:
        """End the process (closing its input asks it to; `kill` does not ask); its exit code."""
        with self._writing, contextlib.suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        if kill:
            with contextlib.suppress(OSError):
                self.process.kill()
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self._pump.join()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return code


def how_it_ended(code: int | None) -> str:
    """A child's exit code in words: "segmentation fault", "exit status 3"."""
    if code is None:
        return "stopped"
    if code < 0:
        with contextlib.suppress(ValueError):
            number = signal.Signals(-code)
            return _SIGNALS.get(number.name, f"signal {number.name}")
        return f"signal {-code}"
    return _WINDOWS_CRASHES.get(code, f"exit status {code}")


_SIGNALS = {
    "SIGSEGV": "segmentation fault",
    "SIGBUS": "bus error",
    "SIGILL": "an instruction this processor does not have",
    "SIGFPE": "arithmetic fault",
    "SIGABRT": "aborted",
    "SIGKILL": "killed, most likely for lack of memory",
}
_WINDOWS_CRASHES = {  # NTSTATUS codes a crashed process exits with
    0xC0000005: "segmentation fault (access violation)",
    0xC000001D: "an instruction this processor does not have",
    0xC00000FD: "stack overflow",
    0xC0000409: "aborted",
}


def open_channel() -> Callable[[dict[str, Any]], None]:
    """In a child: keep the real stdout for messages (whatever a native library prints goes to
    stderr), exit when the parent is gone, and return the function that sends a message."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", errors="replace")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    writing = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        with writing:
            channel.write(json.dumps(message, ensure_ascii=False) + "\n")
            channel.flush()

    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()
    return send


def _exit_with_parent() -> None:
    """A child stuck in native code outlives a killed app unless it notices by itself."""
    import psutil

    parent = psutil.Process(os.getppid())
    while parent.is_running():  # which also tells a new process that got the same PID
        time.sleep(PARENT_CHECK_S)
    os._exit(1)
