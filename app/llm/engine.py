"""One streaming interface for every route that generates text (local llama.cpp, cloud over MCP)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from app.errors import DocentError


class EngineError(DocentError):
    """Generation failed; the message says why in a user's words."""


class EngineCrashed(EngineError):
    """The model's process died or stopped responding mid-request (and has been restarted)."""


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    messages: Sequence[Message]
    max_tokens: int
    temperature: float


@dataclass(frozen=True, slots=True)
class Queued:
    """The engine serves one request at a time: this many are ahead of this one."""

    ahead: int


@dataclass(frozen=True, slots=True)
class PromptEvaluated:
    """The prompt is tokenised (and its length known) before the slow prefill starts."""

    prompt_tokens: int


@dataclass(frozen=True, slots=True)
class TokenGenerated:
    text: str


@dataclass(frozen=True, slots=True)
class StatusReported:
    """What the route says while it works ("Waiting for model...", "still in prefill"): not
    answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class GenerationDone:
    prompt_tokens: int
    completion_tokens: int
    finish_reason: Literal["stop", "length", "cancelled"]
    first_token_at: float | None  # perf_counter() of the first generated token
    last_token_at: float | None
    cost_usd: float | None = 0.0  # None: a cloud model the price table does not list
    cached_tokens: int = 0  # leading prompt tokens the KV cache already held (not evaluated)


def finish(reason: str | None) -> Literal["stop", "length", "cancelled"]:
    """A server's finish reason as GenerationDone's: cut at the token limit, cancelled, or
    stopped (anything else a server says: "stop", "eos", "tool_calls"…)."""
    return "length" if reason == "length" else "cancelled" if reason == "cancelled" else "stop"


GenerationEvent = Queued | PromptEvaluated | StatusReported | TokenGenerated | GenerationDone


@dataclass(slots=True)
class CancelToken:
    """Set from any thread; local generation checks it before each token, a cloud call is
    cancelled through `on_cancel` the moment it is set."""

    _event: threading.Event = field(default_factory=threading.Event)
    _callbacks: list[Callable[[], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def is_cancelled(self) -> bool:
        return self._event.is_set()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run `callback` (on the cancelling thread) when cancelled; at once if already."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()


class ChatEngine(Protocol):
    route: str
    model: str

    def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]: ...
