"""Docent's cloud gateway: an MCP server whose `chat` tool streams from any OpenAI-compatible
`/chat/completions` endpoint and relays each delta as a progress message.

Docent starts it over stdio (`docent gateway`) and hands it the providers and their keys through
the environment, never on the command line. Provider failures become tool errors a user can act
on; no error message ever contains a key.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from app.cjk import estimate_tokens
from app.errors import DocentError

PROVIDERS_VARIABLE = "DOCENT_GATEWAY_PROVIDERS"
KEY_VARIABLE_PREFIX = "DOCENT_GATEWAY_KEY_"
_LONGEST_RETRY_WAIT_S = 30.0


class ProviderError(DocentError):
    """The provider refused or failed the request; the message says which and why."""


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = Field(
        description="True when the provider sent no usage and Docent counted the tokens itself."
    )


class ChatResult(BaseModel):
    text: str
    model: str
    provider: str
    finish_reason: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    base_url: str
    models: tuple[str, ...]
    key: str | None

    def __repr__(self) -> str:  # never print the key
        return f"Provider({self.name!r}, {self.base_url!r})"


def key_variable(provider: str) -> str:
    return KEY_VARIABLE_PREFIX + provider.upper().replace("-", "_")


def providers_from_environment(environment: dict[str, str] | None = None) -> list[Provider]:
    environment = dict(os.environ if environment is None else environment)
    try:
        raw = json.loads(environment.get(PROVIDERS_VARIABLE, "[]"))
        return [
            Provider(
                item["name"],
                item["base_url"].rstrip("/"),
                tuple(item["models"]),
                environment.get(key_variable(item["name"])) or None,
            )
            for item in raw
        ]
    except (ValueError, KeyError, TypeError) as error:
        raise ProviderError(f"{PROVIDERS_VARIABLE} is not a valid provider list: {error}") from None


def providers_environment(providers: Sequence[Provider]) -> dict[str, str]:
    """The environment that names `providers` to a gateway process (their keys: below)."""
    listed = [{"name": p.name, "base_url": p.base_url, "models": list(p.models)} for p in providers]
    return {PROVIDERS_VARIABLE: json.dumps(listed)}


def keys_environment(providers: Sequence[Provider]) -> dict[str, str]:
    """The environment that hands the providers' keys to a gateway process; kept apart from
    any settings object, so no validation or representation of one can show a key."""
    return {key_variable(p.name): p.key for p in providers if p.key}


@dataclass(frozen=True, slots=True)
class Timeouts:
    connect_s: float = 10.0
    first_token_s: float = 60.0
    total_s: float = 300.0


Relay = Callable[[str], Awaitable[None]]


class OpenAICompatibleGateway:
    """Streams chat completions from the configured providers."""

    def __init__(
        self,
        providers: Sequence[Provider],
        client: httpx.AsyncClient,
        timeouts: Timeouts = Timeouts(),
    ) -> None:
        self.providers = list(providers)
        self.client = client
        self.timeouts = timeouts

    def resolve(self, model: str) -> tuple[Provider, str]:
        """`provider/model`, or a model name that one provider lists."""
        name, _, rest = model.partition("/")
        for provider in self.providers:
            if rest and provider.name == name:
                return provider, rest
        for provider in self.providers:
            if model in provider.models:
                return provider, model
        known = ", ".join(f"{p.name}/{m}" for p in self.providers for m in p.models) or "none"
        raise ProviderError(f"no provider serves the model {model!r} (configured: {known})")

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        model: str,
        max_tokens: int,
        temperature: float,
        relay: Relay,
    ) -> ChatResult:
        provider, model_name = self.resolve(model)
        body = {
            "model": model_name,
            "messages": [message.model_dump() for message in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        try:
            async with asyncio.timeout(self.timeouts.total_s):
                return await self._chat_once_retrying_429(provider, model_name, body, relay)
        except TimeoutError:
            raise ProviderError(
                f"{provider.name} did not finish the answer within {self.timeouts.total_s:g} s"
            ) from None

    async def _chat_once_retrying_429(
        self, provider: Provider, model: str, body: dict[str, Any], relay: Relay
    ) -> ChatResult:
        for attempt in (1, 2):
            try:
                return await self._stream(provider, model, body, relay)
            except _RateLimited as limited:
                if attempt == 2 or limited.wait_s is None or limited.wait_s > _LONGEST_RETRY_WAIT_S:
                    after = f"; it asks to wait {limited.wait_s:g} s" if limited.wait_s else ""
                    raise ProviderError(
                        f"{provider.name} is rate-limiting requests (HTTP 429){after}"
                    ) from None
                await asyncio.sleep(limited.wait_s)  # honour Retry-After, once
        raise AssertionError("unreachable")

    async def _stream(
        self, provider: Provider, model: str, body: dict[str, Any], relay: Relay
    ) -> ChatResult:
        headers = {"Authorization": f"Bearer {provider.key}"} if provider.key else {}
        url = f"{provider.base_url}/chat/completions"
        timeout = httpx.Timeout(
            self.timeouts.total_s, connect=self.timeouts.connect_s, read=self.timeouts.first_token_s
        )
        text: list[str] = []
        finish_reason: str | None = None
        usage: dict[str, Any] | None = None
        served_model = model
        completion_chunks = 0
        try:
            async with self.client.stream(
                "POST", url, json=body, headers=headers, timeout=timeout
            ) as response:
                if response.status_code != 200:
                    await _raise_for_status(provider, model, response)
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    chunk = json.loads(data)
                    served_model = chunk.get("model") or served_model
                    usage = chunk.get("usage") or usage
                    for choice in chunk.get("choices") or []:
                        delta = (choice.get("delta") or {}).get("content")
                        if delta:
                            completion_chunks += 1
                            text.append(delta)
                            await relay(delta)
                        finish_reason = choice.get("finish_reason") or finish_reason
        except httpx.ConnectError:
            raise ProviderError(f"cannot reach {provider.name} at {provider.base_url}") from None
        except httpx.ConnectTimeout:
            raise ProviderError(
                f"cannot connect to {provider.name} within {self.timeouts.connect_s:g} s"
            ) from None
        except httpx.TimeoutException:
            waited = "started answering" if not text else "sent the next part of the answer"
            raise ProviderError(
                f"{provider.name} has not {waited} within {self.timeouts.first_token_s:g} s"
            ) from None
        except (httpx.RemoteProtocolError, httpx.ReadError):
            finish_reason = None  # the connection dropped: reported as a cut stream below
        except json.JSONDecodeError:
            raise ProviderError(f"{provider.name} sent a malformed stream") from None
        if finish_reason is None:
            received = sum(len(part) for part in text)
            raise ProviderError(
                f"the stream from {provider.name} was cut off mid-answer "
                f"after {received} characters"
            )
        answer = "".join(text)
        return ChatResult(
            text=answer,
            model=served_model,
            provider=provider.name,
            finish_reason=finish_reason,
            usage=_usage(usage, body["messages"], completion_chunks),
        )


class _RateLimited(Exception):
    def __init__(self, wait_s: float | None) -> None:
        super().__init__()
        self.wait_s = wait_s


async def _raise_for_status(provider: Provider, model: str, response: httpx.Response) -> None:
    status = response.status_code
    if status == 429:
        raise _RateLimited(_retry_after(response.headers.get("retry-after")))
    detail = (await response.aread()).decode("utf-8", "replace").strip()[:200]
    if provider.key:
        detail = detail.replace(provider.key, "…")
    if status in (401, 403):
        message = f"{provider.name} rejected the API key (HTTP {status})"
    elif status == 404:
        message = f"{provider.name} does not know the model {model!r} (HTTP 404)"
    elif status >= 500:
        message = f"{provider.name} failed with a server error (HTTP {status})"
    else:
        message = f"{provider.name} refused the request (HTTP {status})"
    raise ProviderError(f"{message}: {detail}" if detail else message)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - time.time()) if when else None


def _usage(reported: dict[str, Any] | None, messages: list[dict[str, str]], chunks: int) -> Usage:
    if reported and "prompt_tokens" in reported:
        return Usage(
            prompt_tokens=int(reported["prompt_tokens"]),
            completion_tokens=int(reported.get("completion_tokens", chunks)),
            estimated=False,
        )
    # Some servers (llama.cpp's among them) send no usage when streaming: count it ourselves.
    prompt = sum(estimate_tokens(message["content"]) for message in messages)
    return Usage(prompt_tokens=prompt, completion_tokens=chunks, estimated=True)


def build_server(gateway: OpenAICompatibleGateway) -> MCPServer:
    server: MCPServer = MCPServer(
        "docent-gateway",
        instructions="Chat completions from OpenAI-compatible providers, streamed as progress.",
    )

    @server.tool()
    async def chat(
        messages: list[ChatMessage],
        model: str,
        ctx: Context,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        """Answer `messages` with `model` (`provider/model`); partial text arrives as progress
        messages, the whole text, usage and finish reason as the result."""
        sent = 0

        async def relay(delta: str) -> None:
            nonlocal sent
            sent += 1
            await ctx.report_progress(sent, None, delta)

        try:
            return await gateway.chat(messages, model, max_tokens, temperature, relay)
        except ProviderError as error:
            raise ToolError(str(error)) from None

    return server


def serve_stdio() -> int:
    """`docent gateway`: serve the providers named in the environment over stdio."""

    async def serve() -> None:
        async with httpx.AsyncClient() as client:
            server = build_server(OpenAICompatibleGateway(providers_from_environment(), client))
            await server.run_stdio_async()

    asyncio.run(serve())
    return 0
