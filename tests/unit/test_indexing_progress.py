"""How far indexing is and how long it will take (app/intake/progress.py), on a fake clock."""

from __future__ import annotations

import pytest

from app.intake.progress import (
    MIN_SECONDS,
    EmbeddingMeter,
    IndexingProgress,
    ReadingMeter,
    time_left,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def read(meter: ReadingMeter, clock: FakeClock, size: int, seconds: float, pages: int) -> None:
    meter.file_started()
    clock.now += seconds
    meter.file_finished(size, read=True, pages=pages, chunks=pages * 2)


def test_no_time_left_is_guessed_before_enough_files_and_seconds_are_read() -> None:
    clock = FakeClock()
    meter = ReadingMeter([1000] * 10, clock=clock)
    assert meter.progress() == IndexingProgress("reading", 0, 10, None, None)
    read(meter, clock, 1000, 0.4, pages=4)
    read(meter, clock, 1000, 0.4, pages=4)
    progress = meter.progress()
    assert progress.pages_per_s == pytest.approx(10.0)  # pages/s from the first file on
    assert progress.eta_s is None  # two files: too few
    read(meter, clock, 1000, 0.1, pages=1)
    assert meter.progress().eta_s is None  # three, but under MIN_SECONDS of reading
    read(meter, clock, 1000, 0.4, pages=4)
    assert meter.progress().eta_s == pytest.approx(6 * 1.3 / 4)


def test_mixed_sizes_are_estimated_by_a_cost_per_file_and_a_cost_per_byte() -> None:
    """Notes cost 0.1 s each, books 1 s per MB more: the ETA of 10 notes and one book left is
    what that costs, where bytes/s alone (from the notes) or files/s alone would be far off."""
    clock = FakeClock()
    notes, book = [2_000] * 20, 10_000_000
    meter = ReadingMeter([*notes, book, *notes[:10], book], clock=clock)
    for size in [*notes, book]:
        read(meter, clock, size, 0.1 + size / 1_000_000, pages=1)
    eta = meter.progress().eta_s
    assert eta == pytest.approx(10 * (0.1 + 0.002) + 0.1 + 10.0, rel=1e-6)


def test_the_file_being_read_counts_in_pages_per_second_and_comes_off_the_time_left() -> None:
    clock = FakeClock()
    meter = ReadingMeter([100] * 5, clock=clock)
    for _ in range(3):
        read(meter, clock, 100, 1.0, pages=10)
    meter.file_started()
    clock.now += 0.5
    meter.pages_read(10)
    progress = meter.progress()
    assert progress.pages_per_s == pytest.approx(40 / 3.5)
    assert progress.eta_s == pytest.approx(2 * 1.0 - 0.5)


def test_skipped_and_failed_files_count_as_done_but_not_as_samples() -> None:
    """A resumed queue starts with a run of files skipped as unchanged in no time at all."""
    clock = FakeClock()
    meter = ReadingMeter([500] * 8, done=2, clock=clock)
    for _ in range(3):
        meter.file_started()
        clock.now += 0.001
        meter.file_finished(500, read=False)
    for _ in range(3):
        read(meter, clock, 500, 0.5, pages=2)
    progress = meter.progress()
    assert (progress.done, progress.total) == (8, 10)
    assert progress.eta_s == pytest.approx(2 * 0.5)


def test_the_embedding_pass_is_added_where_its_speed_is_known() -> None:
    clock = FakeClock()
    sizes = [1000] * 6
    unknown = ReadingMeter(sizes, embeds=True, pending_chunks=10, clock=clock)
    known = ReadingMeter(sizes, embeds=True, pending_chunks=10, embedding_speed=20.0, clock=clock)
    for meter in (unknown, known):
        for _ in range(3):
            read(meter, clock, 1000, 0.5, pages=5)  # 10 chunks a file
    assert unknown.progress().eta_s == pytest.approx(1.5)
    assert unknown.progress().embedding_after
    assert "then embedding" in unknown.progress().describe()
    # 10 waiting + 30 made + 30 to come, at 20 chunks/s
    assert known.progress().eta_s == pytest.approx(1.5 + 70 / 20)
    assert not known.progress().embedding_after


def test_an_embedding_pass_uses_its_own_speed_once_measured() -> None:
    clock = FakeClock()
    meter = EmbeddingMeter(known_speed=10.0, clock=clock)
    assert meter.update(0, 100).eta_s == pytest.approx(10.0)  # the last pass's speed
    clock.now += MIN_SECONDS
    assert meter.update(40, 100).eta_s == pytest.approx(60 / 40)
    assert meter.speed() == pytest.approx(40.0)
    assert EmbeddingMeter(None, clock).update(0, 100).eta_s is None


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (4, "a few seconds left"),
        (42, "about 40 s left"),
        (170, "about 3 min left"),
        (3600 + 25 * 60, "about 1 h 25 min left"),
        (7200, "about 2 h left"),
    ],
)
def test_time_left_is_said_roughly(seconds: float, said: str) -> None:
    assert time_left(seconds) == said


def test_progress_reads_as_one_line() -> None:
    progress = IndexingProgress("reading", 312, 1000, 48.2, 170.0)
    assert progress.describe() == "312/1,000 files · 48 pages/s · about 3 min left"
    assert IndexingProgress("reading", 2, 10, 3.25, None).describe() == "2/10 files · 3.2 pages/s"
    embedding = IndexingProgress("embedding", 300, 4000, None, 65.0)
    assert embedding.describe() == "300/4,000 chunks embedded · about 1 min left"


def test_a_first_folder_asks_once_for_the_embedding_speed_and_then_counts_the_pass() -> None:
    """Embedding is most of a big folder's time: with no speed kept from an earlier pass, the
    meter asks for one (the intake measures a few batches) as soon as it estimates anything."""
    clock = FakeClock()
    meter = ReadingMeter([1000] * 6, embeds=True, clock=clock)
    for _ in range(2):
        read(meter, clock, 1000, 0.6, pages=4)
    assert not meter.wants_embedding_speed  # too little read to estimate anything yet
    read(meter, clock, 1000, 0.6, pages=4)
    assert meter.wants_embedding_speed
    assert meter.progress().embedding_after  # the reading's time, "then embedding"
    meter.embedding_measured(12.0)
    assert not meter.wants_embedding_speed
    progress = meter.progress()
    assert not progress.embedding_after
    # 3 files left at 0.6 s; 24 chunks made and 24 more to come, at 12 chunks/s.
    assert progress.eta_s == pytest.approx(3 * 0.6 + 48 / 12.0)
    meter.embedding_measured(None)  # the embedder failed: asked once, never again
    assert not meter.wants_embedding_speed
    assert not ReadingMeter([1000], embeds=True, embedding_speed=5.0).wants_embedding_speed
