"""Docent's cloud gateway: an MCP server whose `chat` tool streams from any OpenAI-compatible
`/chat/completions` endpoint and relays each delta as a progress message.

Docent starts it over stdio (`docent gateway`) and hands it the providers and their keys through
the environment, never on the command line. Provider failures become tool errors a user can act
on; no error message ever contains a key.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from app.errors import DocentError
from app.llm.openai_stream import (
    Endpoint,
    RateLimited,
    StreamEnd,
    StreamError,
    Timeouts,
    counts,
    stream_chat,
)

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


Relay = Callable[[str], Awaitable[None]]


class OpenAICompatibleGateway:
    """Streams chat completions from the configured providers."""

    def __init__(
        self,
        providers: Sequence[Provider],
        client: httpx.AsyncClient,
        timeouts: Timeouts | None = None,
    ) -> None:
        self.providers = list(providers)
        self.client = client
        self.timeouts = timeouts or Timeouts()

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
            except RateLimited as limited:
                if attempt == 2 or limited.wait_s is None or limited.wait_s > _LONGEST_RETRY_WAIT_S:
                    raise ProviderError(str(limited)) from None
                await asyncio.sleep(limited.wait_s)  # honour Retry-After, once
        raise AssertionError("unreachable")

    async def _stream(
        self, provider: Provider, model: str, body: dict[str, Any], relay: Relay
    ) -> ChatResult:
        endpoint = Endpoint(provider.name, provider.base_url, provider.key)
        text: list[str] = []
        end: StreamEnd | None = None
        try:
            async for part in stream_chat(self.client, endpoint, body, self.timeouts, model=model):
                if isinstance(part, StreamEnd):
                    end = part
                else:
                    text.append(part)
                    await relay(part)
        except RateLimited:
            raise
        except StreamError as error:
            raise ProviderError(str(error)) from None
        assert end is not None  # the stream ends with one
        tokens = counts(end, [message["content"] for message in body["messages"]])
        return ChatResult(
            text="".join(text),
            model=end.model,
            provider=provider.name,
            finish_reason=end.finish_reason,
            usage=Usage(
                prompt_tokens=tokens.prompt_tokens,
                completion_tokens=tokens.completion_tokens,
                estimated=tokens.estimated,
            ),
        )


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
