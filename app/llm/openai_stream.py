"""A chat completion streamed from an OpenAI-compatible endpoint (`POST {base_url}/chat/completions`
with `stream: true`), written once for the two routes that use one: Docent's cloud gateway
(app/cloud/gateway.py) and a model server the user runs as the local route (server_model.py).

A failure becomes a `StreamError` a user can act on; no message ever contains the key.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from app.cjk import estimate_tokens
from app.llm.engine import EngineError


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str  # as messages name it: a provider's name, a server's host
    base_url: str  # ending before /chat/completions
    key: str | None

    def __repr__(self) -> str:  # never print the key
        return f"Endpoint({self.name!r}, {self.base_url!r})"


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_s: float = 10.0
    first_token_s: float = 60.0  # also the longest silence between two parts of the answer
    total_s: float = 300.0


class StreamError(EngineError):
    """The endpoint refused or failed the request; `received`: the characters of answer text
    that arrived before it failed (0: it failed before its first token)."""

    def __init__(self, message: str, received: int = 0) -> None:
        super().__init__(message)
        self.received = received


class RateLimited(StreamError):
    """HTTP 429; `wait_s` is its Retry-After, when it sent one."""

    def __init__(self, message: str, wait_s: float | None) -> None:
        super().__init__(message)
        self.wait_s = wait_s


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """How the stream ended, after its last text: what the server said about it."""

    finish_reason: str
    model: str  # as the server names it
    chunks: int  # pieces of answer text received
    usage: dict[str, Any] | None  # the server's usage, when it sent one
    timings: dict[str, Any] | None  # llama.cpp's server: its own prompt and decode counts


@dataclass(frozen=True, slots=True)
class Counts:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int  # leading prompt tokens the server's cache held (0: none or not said)
    estimated: bool  # no usage came: Docent counted the tokens itself


async def stream_chat(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    body: dict[str, Any],
    timeouts: Timeouts,
    *,
    model: str,
) -> AsyncGenerator[str | StreamEnd, None]:
    """Each piece of answer text as it arrives, then one StreamEnd. `model` names the model in
    messages (a 404). Raises StreamError (RateLimited for HTTP 429)."""
    headers = {"Authorization": f"Bearer {endpoint.key}"} if endpoint.key else {}
    url = f"{endpoint.base_url}/chat/completions"
    timeout = httpx.Timeout(
        timeouts.total_s, connect=timeouts.connect_s, read=timeouts.first_token_s
    )
    received = chunks = 0
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    served_model = model
    name = endpoint.name
    done = False  # "[DONE]" came
    try:
        request = client.stream("POST", url, json=body, headers=headers, timeout=timeout)
        async with request as response:
            if response.status_code != 200:
                await _raise_for_status(endpoint, model, response)
            async for line in response.aiter_lines():
                # Read to the body's end, not left at "[DONE]": httpx's iterators abandoned
                # mid-body are closed when collected, and under qasync (no async generator
                # hooks) that raises "async generator ignored GeneratorExit" in the window.
                if done or not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    continue
                chunk = json.loads(data)
                served_model = chunk.get("model") or served_model
                usage = chunk.get("usage") or usage
                timings = chunk.get("timings") or timings
                for choice in chunk.get("choices") or []:
                    delta = (choice.get("delta") or {}).get("content")
                    if delta:
                        chunks += 1
                        received += len(delta)
                        yield delta
                    finish_reason = choice.get("finish_reason") or finish_reason
    except httpx.ConnectError:
        raise StreamError(f"cannot reach {name} at {endpoint.base_url}") from None
    except httpx.ConnectTimeout:
        raise StreamError(f"cannot connect to {name} within {timeouts.connect_s:g} s") from None
    except httpx.TimeoutException:
        if done:  # a server that keeps the connection open after "[DONE]": the answer is whole
            yield StreamEnd(finish_reason or "stop", served_model, chunks, usage, timings)
            return
        waited = "started answering" if not received else "sent the next part of the answer"
        raise StreamError(
            f"{name} has not {waited} within {timeouts.first_token_s:g} s", received
        ) from None
    except (httpx.RemoteProtocolError, httpx.ReadError):
        finish_reason = None  # the connection dropped: reported as a cut stream below
    except json.JSONDecodeError:
        raise StreamError(f"{name} sent a malformed stream", received) from None
    if finish_reason is None:
        raise StreamError(
            f"the stream from {name} was cut off mid-answer after {received} characters", received
        )
    yield StreamEnd(finish_reason, served_model, chunks, usage, timings)


async def _raise_for_status(endpoint: Endpoint, model: str, response: httpx.Response) -> None:
    status, name = response.status_code, endpoint.name
    if status == 429:
        wait_s = retry_after(response.headers.get("retry-after"))
        after = f"; it asks to wait {wait_s:g} s" if wait_s else ""
        raise RateLimited(f"{name} is rate-limiting requests (HTTP 429){after}", wait_s)
    detail = (await response.aread()).decode("utf-8", "replace").strip()[:200]
    if endpoint.key:
        detail = detail.replace(endpoint.key, "…")
    if status in (401, 403):
        message = f"{name} rejected the API key (HTTP {status})"
    elif status == 404:
        message = f"{name} does not know the model {model!r} (HTTP 404)"
    elif status >= 500:
        message = f"{name} failed with a server error (HTTP {status})"
    else:
        message = f"{name} refused the request (HTTP {status})"
    raise StreamError(f"{message}: {detail}" if detail else message)


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds from now: a number, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


def counts(end: StreamEnd, prompt: Sequence[str]) -> Counts:
    """The tokens of the request (`prompt`: its messages' text) and of the answer: as the
    server reported them, or counted here when it sent no usage (llama-cpp-python's server
    does not when streaming): a text chunk per token."""
    usage = end.usage or {}
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or (end.timings or {}).get("cache_n") or 0
    cached = cached if isinstance(cached, int) and cached > 0 else 0
    if "prompt_tokens" in usage:
        return Counts(
            int(usage["prompt_tokens"]),
            int(usage.get("completion_tokens", end.chunks)),
            cached,
            estimated=False,
        )
    return Counts(sum(estimate_tokens(text) for text in prompt), end.chunks, cached, True)
