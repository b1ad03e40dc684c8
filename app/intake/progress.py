"""How far indexing is, how long the rest will take, and where the time went: computed here
once, and shown in the same words by the window and `docent index` (IndexingProgress.describe).

The estimate. The files of one folder differ by orders of magnitude (a 2 kB note, a 300-page
PDF), so neither files/s nor bytes/s alone predicts the rest: a folder of notes costs per file
(a round trip to the reader process, a hash, a transaction), a folder of books per byte. Each
file read so far is a sample (its seconds, its bytes), fitted by least squares to
`seconds = per_file + per_byte × bytes`; the rest then costs per_file × files left + per_byte ×
bytes left. Skipped and failed files are no samples: they cost next to nothing, and a resumed
queue starts with a run of them. The embedding pass that follows is added where its speed is
known (the library keeps the last pass's chunks/s), for as many chunks as the bytes left will
make at the chunks per byte seen so far. Nothing is estimated before MIN_FILES files and
MIN_SECONDS of reading: a guess from one file swings wildly. Pages/s counts pages per second
spent reading: a pause is not counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

MIN_FILES = 3
MIN_SECONDS = 1.0

Stage = Literal["reading", "embedding"]
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class IndexingProgress:
    """A batch's files read (stage "reading") or the library's chunks embedded ("embedding")."""

    stage: Stage
    done: int
    total: int
    pages_per_s: float | None  # None until a page is read
    eta_s: float | None  # None until there is enough to estimate
    embedding_after: bool = False  # an embedding pass follows that `eta_s` leaves out

    def describe(self) -> str:
        """ "312/1,000 files · 48 pages/s · about 3 min left" """
        unit = "files" if self.stage == "reading" else "chunks embedded"
        parts = [f"{self.done:,}/{self.total:,} {unit}"]
        if self.pages_per_s is not None:
            parts.append(f"{self.pages_per_s:.{0 if self.pages_per_s >= 10 else 1}f} pages/s")
        if self.eta_s is not None:
            then = ", then embedding" if self.embedding_after else ""
            parts.append(time_left(self.eta_s) + then)
        return " · ".join(parts)


def time_left(seconds: float) -> str:
    if seconds < 10:
        return "a few seconds left"
    if seconds < 60:
        return f"about {5 * round(seconds / 5)} s left"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min left"
    hours, minutes = divmod(minutes, 60)
    return f"about {hours} h {minutes} min left" if minutes else f"about {hours} h left"


class ReadingMeter:
    """One batch's files as the queue reads them: feed it each file's start, its pages as they
    are parsed and its end; `progress()` says how far the batch is."""

    def __init__(
        self,
        sizes: Sequence[int],
        *,
        done: int = 0,
        embeds: bool = False,
        pending_chunks: int = 0,
        embedding_speed: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """`sizes`: the bytes of each file to read; `done`: files finished before (a resumed
        queue); `embeds`: an embedding pass follows, of `pending_chunks` already waiting and the
        chunks this batch makes, at `embedding_speed` chunks/s where it is known."""
        self.done = done
        self.total = done + len(sizes)
        self._files_left = len(sizes)
        self._bytes_left = sum(sizes)
        self._embeds = embeds
        self._pending_chunks = pending_chunks
        self._embedding_speed = embedding_speed
        self._speed_asked = False
        self._clock = clock
        self._started: float | None = None  # the file being read
        self._pages_now = 0  # of the file being read
        self._seconds = 0.0  # reading finished files
        self._pages = 0
        self._chunks = 0
        self._bytes_read = 0
        # Sums over the samples (bytes b, seconds t) for the least-squares fit.
        self._n = 0
        self._sum_b = self._sum_t = self._sum_bb = self._sum_bt = 0.0

    def file_started(self) -> None:
        self._started = self._clock()
        self._pages_now = 0

    def pages_read(self, done: int) -> None:
        self._pages_now = done

    def file_finished(self, size: int, *, read: bool, pages: int = 0, chunks: int = 0) -> None:
        """`read`: the file was read and stored (not skipped, not failed)."""
        seconds = self._running()
        self._started = None
        self._seconds += seconds
        self.done += 1
        self._files_left = max(0, self._files_left - 1)
        self._bytes_left = max(0, self._bytes_left - size)
        if read:
            self._pages += pages
            self._chunks += chunks
            self._bytes_read += size
            self._n += 1
            self._sum_b += size
            self._sum_t += seconds
            self._sum_bb += size * size
            self._sum_bt += size * seconds

    @property
    def wants_embedding_speed(self) -> bool:
        """The time left would leave out the embedding pass, most of a big folder's time: its
        speed was never measured with this embedder, and chunks wait for it."""
        return (
            self._embeds
            and self._embedding_speed is None
            and not self._speed_asked
            and self._chunks > 0
            and self._n >= MIN_FILES
            and self._sum_t >= MIN_SECONDS
        )

    def embedding_measured(self, chunks_per_s: float | None) -> None:
        self._speed_asked = True
        self._embedding_speed = chunks_per_s

    def progress(self) -> IndexingProgress:
        running = self._running()
        seconds = self._seconds + running
        pages = self._pages + (self._pages_now if self._started is not None else 0)
        pages_per_s = pages / seconds if pages and seconds > 0 else None
        eta: float | None = None
        embedding_after = False
        if self._n >= MIN_FILES and self._sum_t >= MIN_SECONDS:
            per_file, per_byte = _fit(self._n, self._sum_b, self._sum_t, self._sum_bb, self._sum_bt)
            eta = max(0.0, per_file * self._files_left + per_byte * self._bytes_left - running)
            if self._embeds:
                chunks = float(self._pending_chunks + self._chunks)
                if self._bytes_read:
                    chunks += self._chunks / self._bytes_read * self._bytes_left
                if self._embedding_speed:
                    eta += chunks / self._embedding_speed
                else:
                    embedding_after = chunks > 0
        return IndexingProgress("reading", self.done, self.total, pages_per_s, eta, embedding_after)

    def _running(self) -> float:
        return 0.0 if self._started is None else self._clock() - self._started


def _fit(n: int, sum_b: float, sum_t: float, sum_bb: float, sum_bt: float) -> tuple[float, float]:
    """(seconds per file, seconds per byte), neither negative."""
    spread = n * sum_bb - sum_b * sum_b
    if spread <= 1e-9 * n * sum_bb:  # files of one size: no per-byte cost can be told apart
        return sum_t / n, 0.0
    per_byte = (n * sum_bt - sum_b * sum_t) / spread
    per_file = (sum_t - per_byte * sum_b) / n
    if per_byte < 0:  # bigger files were no slower
        return sum_t / n, 0.0
    if per_file < 0:  # small files were faster than any fixed cost allows
        return 0.0, sum_bt / sum_bb
    return per_file, per_byte


class EmbeddingMeter:
    """An embedding pass: its chunks/s as measured once it has run MIN_SECONDS, before that the
    speed the library kept from the last pass."""

    def __init__(self, known_speed: float | None, clock: Clock = time.monotonic) -> None:
        self._known_speed = known_speed
        self._clock = clock
        self._first: tuple[float, int] | None = None  # when, and how many were done then
        self._last: tuple[float, int] | None = None

    def update(self, done: int, total: int) -> IndexingProgress:
        now = self._clock()
        if self._first is None:
            self._first = (now, done)
        self._last = (now, done)
        speed = self.speed() or self._known_speed
        eta = (total - done) / speed if speed else None
        return IndexingProgress("embedding", done, total, None, eta)

    def speed(self) -> float | None:
        """Chunks/s measured in this pass; None before MIN_SECONDS of it."""
        if self._first is None or self._last is None:
            return None
        seconds = self._last[0] - self._first[0]
        chunks = self._last[1] - self._first[1]
        return chunks / seconds if chunks and seconds >= MIN_SECONDS else None


@dataclass(slots=True)
class IntakeTimes:
    """Seconds the intake spent in each step (the folder bench reads them: `docent bench
    folder`). OCR runs beside reading, so the steps may add up to more than the time taken."""

    parse_s: float = 0.0  # checking, hashing and reading files in the reader process
    write_s: float = 0.0  # documents' transactions, and the queue's own
    ocr_s: float = 0.0  # scanned pages, read and stored
    embedding_s: float = 0.0  # embedding passes, their vectors stored
    pages: int = 0  # read from files (not OCR'd)
    ocr_pages: int = 0
