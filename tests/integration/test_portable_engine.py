"""One build of the local engine for every processor: on emulated older CPUs (qemu's user mode,
which faults on any instruction the emulated CPU lacks, as the CPU would) ggml chooses the CPU
code that processor runs, and the engine answers. Python's own stack (NumPy 2) needs x86-64-v2,
so Nehalem (SSE4.2, no AVX) is the oldest processor Docent runs on."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import SHARED_MODELS
from tests.portability import engine_on, on_x86_64_linux

pytestmark = on_x86_64_linux

ENGINE = [sys.executable, "-I", "-m", "app.llm.worker"]


def test_the_engine_answers_on_a_processor_without_avx() -> None:
    model = SHARED_MODELS / "qwen2.5-coder-0.5b-instruct-q4.gguf"
    emulated = engine_on("Nehalem", ENGINE, model, timeout_s=600)
    assert emulated.variant == "sse42"
    assert "seven" in emulated.answer.lower() or "7" in emulated.answer


@pytest.mark.parametrize(
    ("cpu", "variant"),
    [("Nehalem", "sse42"), ("SandyBridge", "sandybridge"), ("Haswell", "haswell")],
)
def test_each_processor_gets_the_cpu_code_it_runs(cpu: str, variant: str) -> None:
    assert engine_on(cpu, ENGINE, None, timeout_s=120).variant == variant
