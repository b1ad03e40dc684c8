"""The local route on a model server the user runs (llama.cpp's server, vLLM, Ollama, LM Studio):
an OpenAI-compatible endpoint that answers as privately as this computer does, for free.

It streams through the same client as the cloud gateway (openai_stream.py); its time to first
token and its speed are measured here, from the stream. A conversation's prefix is reused where
the server can (`cache_prompt` for llama.cpp's server; the others cache prefixes by themselves),
and the tokens its cache held are reported when the server says (`cached_tokens`). A failure
before the first token raises a StreamError with nothing written: the answer then falls back to
the model on this computer (app/answering), and says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import httpx

from app.cjk import estimate_tokens
from app.llm.engine import (
    CancelToken,
    GenerationDone,
    GenerationEvent,
    GenerationRequest,
    PromptEvaluated,
    TokenGenerated,
    finish,
)
from app.llm.openai_stream import Endpoint, StreamEnd, StreamError, Timeouts, counts, stream_chat
from app.llm.server_names import server_host, server_model_name
from app.settings import ModelServerSettings

# A server that just failed is not asked again for this long: the steps of one answer (a
# calculation, then the answer) do not each wait for an unreachable host.
DOWN_FOR_S = 15.0


class ServerEngine:
    """A ChatEngine on the route "local" whose model runs on a server."""

    route = "local"

    def __init__(
        self,
        settings: ModelServerSettings,
        key: str | None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.settings = settings
        self.model = server_model_name(settings)
        self._endpoint = Endpoint(server_host(settings.base_url), settings.base_url, key)
        # max_tokens bounds an answer: no total deadline beyond the wait for each token.
        self._timeouts = Timeouts(
            settings.connect_timeout_s, settings.first_token_timeout_s, total_s=86400.0
        )
        self._client = client or httpx.AsyncClient()
        self._down: tuple[float, str] | None = None  # (until, why) after a failure
        # What the last request found, for the status bar: None before the first; else
        # (reached, why not).
        self.reached: tuple[bool, str | None] | None = None

    async def close(self) -> None:
        await self._client.aclose()

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        if self._down is not None and time.monotonic() < self._down[0]:
            raise StreamError(self._down[1])
        prompt = [message.content for message in request.messages]
        yield PromptEvaluated(sum(estimate_tokens(text) for text in prompt))
        body = {
            "model": self.settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
            "cache_prompt": True,  # llama.cpp's server: keep the prefix's KV (others ignore it)
        }
        parts = stream_chat(
            self._client, self._endpoint, body, self._timeouts, model=self.settings.model
        )
        loop = asyncio.get_running_loop()
        stopped = loop.create_future()

        def settle() -> None:
            if not stopped.done():
                stopped.set_result(None)

        def stop() -> None:  # may run on another thread (the window's Stop)
            loop.call_soon_threadsafe(settle)

        cancel.on_cancel(stop)
        first_at: float | None = None
        last_at: float | None = None
        end: StreamEnd | None = None
        chunks = 0
        try:
            while True:
                step = asyncio.ensure_future(anext(parts))
                await asyncio.wait({step, stopped}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():  # stopped: the request is dropped, what came is kept
                    step.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                        await step
                    break
                try:
                    part = step.result()
                except StopAsyncIteration:
                    break
                except StreamError as error:
                    self.reached = (error.received > 0, str(error))
                    if not error.received:
                        self._down = (time.monotonic() + DOWN_FOR_S, str(error))
                    raise
                if isinstance(part, StreamEnd):
                    end = part
                    continue
                last_at = time.perf_counter()
                first_at = first_at or last_at
                chunks += 1
                yield TokenGenerated(part)
        finally:
            await parts.aclose()
        self._down = None
        if first_at is not None or end is not None:  # a stop before any word says nothing
            self.reached = (True, None)
        if end is None:  # stopped
            end = StreamEnd("cancelled", self.settings.model, chunks, None, None)
        tokens = counts(end, prompt)
        yield GenerationDone(
            prompt_tokens=tokens.prompt_tokens,
            completion_tokens=tokens.completion_tokens,
            finish_reason=finish(end.finish_reason),
            first_token_at=first_at,
            last_token_at=last_at,
            cost_usd=0.0,  # the user's own server: never counted as cloud
            cached_tokens=tokens.cached_tokens,
        )
