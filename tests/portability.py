"""Docent's local engine on processors older than the build machine's, emulated by qemu's user
mode: `qemu-x86_64 -cpu Nehalem` (x86-64-v2: no AVX) runs the engine's child process and raises
an illegal-instruction fault at the first instruction that processor lacks, as the processor
would. A build compiled for the builder's CPU (-march=native on an AVX-512 machine) dies there;
Docent's build chooses the CPU code the emulated processor runs, and answers.

Used by the integration tests (the development build) and `make package-test` (the packaged
app, which runs its own modules as `docent -I -m MODULE`)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.processes import child_folder, how_it_ended

QEMU = "qemu-x86_64"
# The emulation tests' condition: qemu-x86_64 runs this machine's x86-64 Linux build.
on_x86_64_linux = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.machine() != "x86_64",
    reason="qemu-x86_64 emulates x86-64 processors for an x86-64 Linux build",
)
SOURCE = "Customer invoices are kept for seven years after the end of the financial year."
QUESTION = [
    ("system", "Answer briefly, from the source only."),
    ("user", f"Source: {SOURCE}\n\nQuestion: How long are invoices kept?"),
]


class NotPortable(Exception):
    """The engine did not load or answer on the emulated processor."""


@dataclass(frozen=True)
class Emulated:
    variant: str  # the CPU code ggml chose for the emulated processor
    answer: str  # "" when only probed


def qemu() -> str:
    found = shutil.which(QEMU)
    if found is None:
        raise NotPortable(f"{QEMU} is missing: apt install qemu-user")
    return found


def engine_on(
    cpu: str,
    engine: Sequence[str],
    model: Path | None,
    timeout_s: float,
    environment: dict[str, str] | None = None,
) -> Emulated:
    """Run the engine's child (`engine`: the command that starts app.llm.worker) on an emulated
    `cpu`: with `model`, load it and answer QUESTION; without, only choose the CPU code."""
    if model is None:
        requests = [{"op": "probe"}]
    else:
        load = {"op": "load", "path": str(model), "n_ctx": 512, "threads": 2, "gpu_layers": 0}
        generate = {"op": "generate", "id": 1, "messages": QUESTION, "max_tokens": 16}
        requests = [load | {"seed": 1234, "extra_buffers": True}, generate | {"temperature": 0}]
    finished = subprocess.run(
        [qemu(), "-cpu", cpu, *engine],
        input="".join(json.dumps(request) + "\n" for request in requests),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=child_folder(),
        env={**os.environ, **(environment or {})},
    )
    messages = [json.loads(line) for line in finished.stdout.splitlines()]
    backends = [m["backend"] for m in messages if m["event"] in ("backend", "loaded")]
    answer = "".join(m["text"] for m in messages if m["event"] == "token")
    done = [m for m in messages if m["event"] == "done"]
    if finished.returncode != 0 or not backends or (model is not None and not done):
        raise NotPortable(
            f"the engine on an emulated {cpu} ended with {how_it_ended(finished.returncode)}: "
            f"{finished.stderr.strip()[-500:]}"
        )
    return Emulated(backends[0]["variant"], answer)
