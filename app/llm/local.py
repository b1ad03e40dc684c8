"""The local route: a llama.cpp model in a supervised child process (`app.llm.worker`).

llama.cpp is native code built for many processors, GPUs and drivers, and it can crash on a
user's machine (AMX repacking on Sapphire Rapids, a GPU driver, memory running out). In the
app's process that would take the window with it; here it costs one answer: the answer ends with
the reason in words (`EngineCrashed`), the child starts again, and a crash while loading or before
the first token moves the model down the safe-settings ladder (`app.llm.safety`) for its next
start. A child that sends nothing for `stall_timeout_s` is killed the same way.

The child serves one request at a time; this side's SerialWorker sends them in order, so
concurrent questions queue (FIFO) and are told how many are ahead. Tokens cross to the event loop
through `call_soon_threadsafe`; each is stamped here, as it arrives, so the time to first token
is what the user sees. Stop sends a cancel to the child, which stops within one prompt slice or
one token; a child that does not answer a cancel within CANCEL_GRACE_S is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import itertools
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.llm.engine import (
    CancelToken,
    EngineCrashed,
    EngineError,
    GenerationDone,
    GenerationEvent,
    GenerationRequest,
    PromptEvaluated,
    Queued,
    TokenGenerated,
)
from app.llm.native import Backend
from app.llm.safety import STEPS, SafeMode, SafetyMemory, next_level, settings_at
from app.processes import EXITED, ChildProcess, how_it_ended
from app.workers import Emitter, SerialWorker, StreamClosed

POLL_S = 0.05  # how often a quiet child's clock is looked at
LOAD_TIMEOUT_S = 300.0  # a large model from a slow disk
STALL_TIMEOUT_S = 120.0  # the longest a working child may send nothing (one prompt slice)
CANCEL_GRACE_S = 5.0


@dataclass(frozen=True, slots=True)
class LocalModelConfig:
    name: str  # shown on the badge
    path: Path
    n_ctx: int = 4096
    n_threads: int | None = None
    n_gpu_layers: int = 0
    # Fixed, non-zero (llama-cpp-python treats 0 as "random"): the same question over the same
    # sources gets the same answer, which users expect and tests need.
    seed: int = 1234
    stall_timeout_s: float = STALL_TIMEOUT_S

    @property
    def threads(self) -> int:
        # llama-cpp-python decodes on half the CPUs by default; all cores decode faster here.
        return self.n_threads or max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class EngineState:
    """How the model runs here, for Settings, `docent models` and the smoke test."""

    backend: str  # "CPU, icelake code (AVX2 AVX512 …)"
    extra_buffers: bool
    threads: int
    gpu_layers: int
    safe_mode: SafeMode | None

    def describe(self) -> str:
        text = f"{self.backend}; {self.threads} threads"
        if self.gpu_layers:
            text += f", {self.gpu_layers} GPU layers"
        if self.safe_mode is not None:
            return f"{text}; {self.safe_mode.describe()}"
        if not self.extra_buffers:
            text += f"; {AMX_NOTE}"
        return text


class LocalEngine:
    route = "local"

    def __init__(self, config: LocalModelConfig, safety: SafetyMemory | None = None) -> None:
        self.config = config
        self.model = config.name
        self.state: EngineState | None = None  # once loaded
        self._safety = safety or SafetyMemory(None)
        self._notices: list[str] = []
        self._worker = SerialWorker("llm")
        self._child: ChildProcess | None = None  # only touched on the worker thread
        self._ids = itertools.count(1)
        # The child answers one request at a time; later ones queue (FIFO) and are told how many
        # are ahead. Parallel sequences would share the same 2-8 cores: no faster in total, and
        # every answer would start later.
        self._requests = 0
        self._restarting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the child and load the model (mmap: about a second for the bundled 0.5B)."""
        await self._worker.run(self._ready)

    async def close(self) -> None:
        if self._restarting is not None:
            await asyncio.gather(self._restarting, return_exceptions=True)
        await self._worker.run(self._stop)
        self._worker.shutdown()

    def take_notice(self) -> str | None:
        """What the user should hear once: safe settings taken after a crash."""
        return self._notices.pop(0) if self._notices else None

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        def produce(emit: Emitter[GenerationEvent]) -> None:
            self._generate(request, cancel, emit)

        ahead = self._requests
        self._requests += 1
        try:
            if ahead:
                yield Queued(ahead)
            async for event in self._worker.stream(produce):
                yield event
        except EngineCrashed:
            # The next question should not wait for the model to load again.
            self._restarting = asyncio.ensure_future(self._restart())
            raise
        finally:
            self._requests -= 1

    async def _restart(self) -> None:
        with contextlib.suppress(EngineError):  # the next question reports it
            await self._worker.run(self._ready)

    # --- on the worker thread ----------------------------------------------------------------

    def _ready(self) -> ChildProcess:
        """The running child, or a new one with the model loaded, down the ladder while it
        crashes as it loads."""
        if self._child is not None and self._child.process.poll() is None:
            return self._child
        self._stop()
        while True:
            mode = self._safety.get(self._key)
            settings = settings_at(
                mode.level if mode else 0, self.config.threads, self.config.n_gpu_layers
            )
            child = ChildProcess("app.llm.worker")
            child.send(
                {
                    "op": "load",
                    "path": str(self.config.path),
                    "n_ctx": self.config.n_ctx,
                    "threads": settings.threads,
                    "gpu_layers": settings.gpu_layers,
                    "seed": self.config.seed,
                    "extra_buffers": settings.extra_buffers,
                }
            )
            message = child.next_message(LOAD_TIMEOUT_S)
            if message is None:
                child.stop(kill=True)
                raise EngineError(f"the local model did not load within {LOAD_TIMEOUT_S:g} s")
            if message["event"] == "loaded":
                backend = message["backend"]
                self._child = child
                self.state = EngineState(
                    _describe_backend(backend),
                    backend["extra_buffers"],
                    settings.threads,
                    settings.gpu_layers,
                    mode,
                )
                return child
            if message["event"] == "failed":
                child.stop(kill=True)
                raise EngineError(message["reason"])
            crash = how_it_ended(child.stop(kill=True))
            if not self._step_down(f"crashed ({crash}) while loading"):
                raise EngineCrashed(
                    f"the local model crashed ({crash}) while loading, with every safe setting "
                    "Docent has: it cannot run on this computer"
                )

    def _step_down(self, why: str) -> bool:
        """Take the next rung of the safe-settings ladder for this model (False: none left)."""
        mode = self._safety.get(self._key)
        level = next_level(mode.level if mode else 0, self.config.threads, self.config.n_gpu_layers)
        if level is None:
            return False
        new = SafeMode(level, why, datetime.date.today())
        self._safety.set(self._key, new)
        self._notices.append(
            f"The local model {self.model} {why} on this computer. Docent now runs it with safe "
            f"settings ({', '.join(STEPS[:level])}), which may answer a little more slowly; "
            "Settings → Local model shows them and can try the normal settings again."
        )
        return True

    @property
    def _key(self) -> str:
        return self.config.name

    def _generate(
        self, request: GenerationRequest, cancel: CancelToken, emit: Emitter[GenerationEvent]
    ) -> None:
        child = self._ready()
        request_id = next(self._ids)
        child.send(
            {
                "op": "generate",
                "id": request_id,
                "messages": [(m.role, m.content) for m in request.messages],
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
            }
        )
        cancel.on_cancel(lambda: child.send({"op": "cancel", "id": request_id}))
        try:
            self._relay(child, cancel.is_cancelled, emit)
        except StreamClosed:
            # Nobody listens any more: stop the child's generation, and read it to its end so
            # that none of its messages is taken for the next request's.
            child.send({"op": "cancel", "id": request_id})
            with contextlib.suppress(EngineError):
                self._relay(child, lambda: True, lambda event: None)
            raise

    def _relay(
        self,
        child: ChildProcess,
        cancelled: Callable[[], bool],
        emit: Callable[[GenerationEvent], None],
    ) -> None:
        prompt = tokens = 0
        first_at: float | None = None
        last_at: float | None = None
        heard = time.monotonic()
        while True:
            message = child.next_message(POLL_S)
            now = time.monotonic()
            if message is None:
                silent = now - heard
                if silent > self.config.stall_timeout_s or (
                    cancelled() and silent > CANCEL_GRACE_S
                ):
                    self._kill()
                    if cancelled():
                        emit(GenerationDone(prompt, tokens, "cancelled", first_at, last_at, 0.0))
                        return
                    raise EngineCrashed(
                        f"the local model stopped responding (nothing for "
                        f"{self.config.stall_timeout_s:g} s) while answering"
                    )
                continue
            heard = now
            event = message["event"]
            if event == "token":
                tokens += 1
                last_at = time.perf_counter()
                first_at = first_at or last_at
                emit(TokenGenerated(message["text"]))
            elif event == "prompt":
                prompt = message["tokens"]
                emit(PromptEvaluated(prompt))
            elif event == "done":
                emit(
                    GenerationDone(
                        message["prompt_tokens"],
                        message["completion_tokens"],
                        message["finish_reason"],
                        first_at,
                        last_at,
                        0.0,
                        message["cached_tokens"],
                    )
                )
                return
            elif event == "failed":
                raise EngineError(message["reason"])
            elif message is EXITED:
                crash = how_it_ended(self._kill())
                if first_at is None:  # the restart takes the next safe settings
                    self._step_down(f"crashed ({crash}) before its first token")
                raise EngineCrashed(f"the local model crashed ({crash}) while answering")

    def _kill(self) -> int | None:
        child, self._child = self._child, None
        return child.stop(kill=True) if child is not None else None

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.stop(kill=False)


def probe() -> str:
    """What would run a model here (the CPU code ggml chooses, a GPU), asked of a child: loading
    llama.cpp's libraries can crash too. Blocks for a fraction of a second."""
    child = ChildProcess("app.llm.worker")
    try:
        child.send({"op": "probe"})
        message = child.next_message(LOAD_TIMEOUT_S)
    finally:
        code = child.stop(kill=False)
    if message is None or message["event"] != "backend":
        raise EngineCrashed(f"llama.cpp's libraries crashed ({how_it_ended(code)}) as they loaded")
    backend = message["backend"]
    text = _describe_backend(backend)
    if not backend["extra_buffers"]:
        text += f"; {AMX_NOTE}"
    return text


# Why extra buffer types are off on a processor with AMX, before anything crashed.
AMX_NOTE = (
    "weight repacking off (this build's AMX repacking crashes on Q4_K models, "
    "ggml-org/llama.cpp#20824)"
)


def _describe_backend(backend: dict[str, Any]) -> str:
    return Backend(backend["variant"], tuple(backend["features"]), backend["gpu"]).describe()
