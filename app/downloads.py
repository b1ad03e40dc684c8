"""Downloading a catalog model (or an evaluation set's package): streamed with httpx, resumable,
verified, moved in atomically.

The file grows as `<file>.part` in the models folder. Cancelling the download (pause, quit, a lost
connection) keeps that part; the next call hashes it and asks the server for the rest with an HTTP
Range request. Only a file whose size and sha256 match those expected is moved (os.replace, same
folder: atomic) to its final name and stamped, so a half-downloaded or corrupt model never looks
usable. File writes and hashing run on the download's own thread; the event loop only moves bytes.

One download of a model at a time, across processes (two Models managers, the window and
`docent models --download`): each holds a file lock on `<file>.lock` while it writes the part. A
second download of the same model waits for the lock, reporting the part's growth as the other
download's progress, then finds the model downloaded (or resumes the part the other one left).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import httpx

from app.errors import DocentError
from app.verified import Verifiable, stamp_path, write_stamp
from app.workers import Emitter, SerialWorker

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

PROGRESS_INTERVAL = 0.1  # seconds between two progress reports
LOCK_POLL_S = 0.25  # how often a download waiting for another one's lock tries it again
WRITE_SIZE = 1 << 20  # bytes handed to the download's thread at once (one hop per 64 KiB is slow)


class Downloadable(Verifiable, Protocol):
    """What a download needs to know (a CatalogModel is one)."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def url(self) -> str | None: ...


class DownloadError(DocentError):
    """A download failed; the message says why and whether resuming can continue it."""


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    done: int
    total: int
    bytes_per_s: float
    verifying: bool = False  # hashing the part kept from an earlier attempt, before resuming
    elsewhere: bool = False  # another download of it runs (another window, the CLI): waiting


Listener = Callable[[DownloadProgress], None]  # always called on the event loop's thread


def part_path(model: Downloadable, models_dir: Path) -> Path:
    return models_dir / f"{model.file}.part"


def partial_bytes(model: Downloadable, models_dir: Path) -> int:
    """How much of the model an earlier, interrupted download left (0: none)."""
    try:
        return part_path(model, models_dir).stat().st_size
    except OSError:
        return 0


def lock_path(model: Downloadable, models_dir: Path) -> Path:
    return models_dir / f"{model.file}.lock"


def is_downloaded(model: Downloadable, models_dir: Path) -> bool:
    target = models_dir / model.file
    return target.is_file() and stamp_path(model, models_dir).is_file()


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def _status_error(model: Downloadable, status: int) -> DownloadError:
    if status in (401, 403):
        reason = (
            f"the server refused the download (HTTP {status}). Some models need their licence "
            "accepted on Hugging Face first: download the file in a browser, then pick it with "
            "“Use my own GGUF file…”"
        )
    elif status in (404, 410):
        reason = f"the file is not on the server (HTTP {status}): its address is outdated"
    elif status == 429:
        reason = "the server is limiting downloads (HTTP 429): try again in a few minutes"
    elif status >= 500:
        reason = (
            f"the server failed (HTTP {status}): try again later; the download resumes where "
            "it stopped"
        )
    else:
        reason = f"unexpected answer from the server (HTTP {status})"
    return DownloadError(f"{model.name}: {reason}")


def _disk_full(model: Downloadable, models_dir: Path, needed: int) -> DownloadError:
    free = shutil.disk_usage(models_dir).free
    return DownloadError(
        f"{model.name}: not enough disk space in {models_dir} ({_mb(needed)} still to download, "
        f"{_mb(free)} free). Free some space, then resume: what was downloaded is kept"
    )


class _PartFile:
    """The growing `.part` file and its running sha256; used only on the download's thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.digest = hashlib.sha256()
        self.size = 0
        self._handle: IO[bytes] | None = None

    def hash_existing(self, report: Emitter[int]) -> None:
        with self.path.open("rb") as handle:
            while block := handle.read(8 << 20):
                self.digest.update(block)
                self.size += len(block)
                report(self.size)

    def restart(self) -> None:
        self.close()
        self.digest = hashlib.sha256()
        self.size = 0
        self._handle = self.path.open("wb")

    def append(self, block: bytes) -> None:
        if self._handle is None:
            self._handle = self.path.open("ab")
        self._handle.write(block)
        self.digest.update(block)
        self.size += len(block)

    def finish(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())  # on disk before the rename makes it "the model"
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class _ModelLock:
    """The file lock that makes a download of one model the only one, across processes; used
    only on the download's thread. flock (LockFileEx on Windows) is held by the open file, so
    two downloads in one process exclude each other too, and a crashed process's lock goes
    with it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if sys.platform == "win32":
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The last holder removes the file as it lets go: a lock taken on the removed file
            # guards nothing (a third download may hold the new one), so it is tried again.
            current = os.stat(self.path)
        except OSError:
            os.close(fd)
            return False
        if not os.path.samestat(os.fstat(fd), current):
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is None:
            return
        # Windows does not remove an open file: the next download takes the lock on it again.
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)  # lets the lock go
        self._fd = None


async def _wait_for_lock(
    lock: _ModelLock,
    model: Downloadable,
    models_dir: Path,
    worker: SerialWorker,
    progress: Listener | None,
) -> None:
    """Take the model's lock; while another download holds it, report how its part grows."""
    before: tuple[float, int] | None = None
    while not await worker.run(lock.try_acquire):
        if progress:
            done, now = await worker.run(partial_bytes, model, models_dir), time.monotonic()
            rate = (done - before[1]) / max(now - before[0], 1e-6) if before else 0.0
            before = (now, done)
            progress(DownloadProgress(done, model.size, max(rate, 0.0), elsewhere=True))
        await asyncio.sleep(LOCK_POLL_S)


async def download(
    model: Downloadable,
    models_dir: Path,
    progress: Listener | None = None,
    *,
    read_timeout_s: float = 30.0,
) -> Path:
    """Download `model` into `models_dir` (resuming a part left earlier); return its path.

    Cancel the awaiting task to pause: the part is kept for the next call. Another download of
    the same model, running now, is waited for (`elsewhere` progress reports) and not repeated.
    """
    if model.url is None:
        raise DownloadError(f"{model.name} is not a downloadable model (it comes with Docent)")
    target = models_dir / model.file
    part = _PartFile(part_path(model, models_dir))
    lock = _ModelLock(lock_path(model, models_dir))
    worker = SerialWorker("download")
    try:
        await _wait_for_lock(lock, model, models_dir, worker, progress)
        if await worker.run(is_downloaded, model, models_dir):
            return target
        await _fetch(model, models_dir, part, worker, progress, read_timeout_s)
        if part.size != model.size or part.digest.hexdigest() != model.sha256:
            await worker.run(part.path.unlink, missing_ok=True)
            raise DownloadError(
                f"{model.name}: checksum mismatch: the server sent {part.size} bytes with "
                f"sha256 {part.digest.hexdigest()[:12]}…, expected {model.size} bytes "
                f"with sha256 {model.sha256[:12]}…. The file was deleted; download it again"
            )
        await worker.run(_install, part, target, model, models_dir)
        return target
    finally:
        # Queued behind a write (or a lock taken) still in flight when the task was cancelled.
        await worker.run(part.close)
        await worker.run(lock.release)
        worker.shutdown()


def _prepare(model: Downloadable, models_dir: Path) -> int:
    """How much of the part to keep; refuses at once when the rest cannot fit on the disk."""
    models_dir.mkdir(parents=True, exist_ok=True)
    have = partial_bytes(model, models_dir)
    if have > model.size:  # not a prefix of this model: start over
        part_path(model, models_dir).unlink()
        have = 0
    if shutil.disk_usage(models_dir).free < model.size - have:
        raise _disk_full(model, models_dir, model.size - have)
    return have


def _install(part: _PartFile, target: Path, model: Downloadable, models_dir: Path) -> None:
    os.replace(part.path, target)
    write_stamp(stamp_path(model, models_dir), target, model)


async def _fetch(
    model: Downloadable,
    models_dir: Path,
    part: _PartFile,
    worker: SerialWorker,
    progress: Listener | None,
    read_timeout_s: float,
) -> None:
    assert model.url is not None
    have = await worker.run(_prepare, model, models_dir)
    if have:
        # Hashed on the worker, reported on the loop's thread: listeners drive progress bars.
        async for hashed in worker.stream(part.hash_existing):
            if progress:
                progress(DownloadProgress(hashed, model.size, 0.0, verifying=True))
    started = time.monotonic()
    reported = 0.0
    headers = {"Range": f"bytes={have}-"} if have else {}
    timeout = httpx.Timeout(15.0, read=read_timeout_s)
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client,
            client.stream("GET", model.url, headers=headers) as response,
        ):
            if response.status_code == 416 and have == model.size:
                return  # the part is already whole: only the checksum is left to check
            if response.status_code == 200 and have:
                await worker.run(part.restart)  # the server ignores Range: from the start
            elif response.status_code == 206:
                _check_range(model, response, have)
            elif response.status_code != 200:
                raise _status_error(model, response.status_code)
            _check_length(model, response, part.size)
            pending = bytearray()
            async for block in response.aiter_bytes():
                pending += block
                if part.size + len(pending) > model.size:
                    raise DownloadError(
                        f"{model.name}: the server sends more than the expected {model.size} "
                        "bytes: it serves a different file"
                    )
                now = time.monotonic()
                due = now - reported >= PROGRESS_INTERVAL
                complete = part.size + len(pending) == model.size
                if len(pending) < WRITE_SIZE and not (due or complete):
                    continue
                await worker.run(part.append, bytes(pending))
                pending.clear()
                if progress and (due or complete):
                    reported = now
                    rate = (part.size - have) / max(now - started, 1e-6)
                    progress(DownloadProgress(part.size, model.size, rate))
        await worker.run(part.finish)
    except httpx.TimeoutException:
        raise DownloadError(
            f"{model.name}: the server sent nothing for {read_timeout_s:g} s (at "
            f"{_mb(part.size)} of {_mb(model.size)}); resume to continue from there"
        ) from None
    except httpx.TransportError as error:
        raise DownloadError(
            f"{model.name}: the connection broke at {_mb(part.size)} of {_mb(model.size)} "
            f"({error or type(error).__name__}); resume to continue from there"
        ) from None
    except OSError as error:
        if error.errno == errno.ENOSPC:
            needed = model.size - part.size
            raise await worker.run(_disk_full, model, models_dir, needed) from None
        raise DownloadError(
            f"{model.name}: cannot write to {models_dir}: {error.strerror or error}"
        ) from None
    if part.size < model.size:
        raise DownloadError(
            f"{model.name}: the server ended the download at {_mb(part.size)} of "
            f"{_mb(model.size)}; resume to continue from there"
        )


def _check_range(model: Downloadable, response: Any, have: int) -> None:
    content_range = response.headers.get("content-range", "")
    if not content_range.startswith(f"bytes {have}-"):
        raise DownloadError(
            f"{model.name}: the server resumed at the wrong place ({content_range or 'no range'},"
            f" expected byte {have}); delete the partial download and start again"
        )


def _check_length(model: Downloadable, response: Any, have: int) -> None:
    length = response.headers.get("content-length")
    if length is not None and have + int(length) != model.size:
        raise DownloadError(
            f"{model.name}: the server offers {have + int(length)} bytes, {model.size} are "
            "expected: it serves a different file"
        )
