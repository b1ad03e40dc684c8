"""The cloud gateway: real streaming from llama.cpp's OpenAI-compatible server through
`docent gateway` over MCP stdio, and a clear tool error for every way a provider misbehaves."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from app.cloud.gateway import (
    ChatMessage,
    OpenAICompatibleGateway,
    Provider,
    ProviderError,
    Timeouts,
    keys_environment,
    providers_environment,
)
from tests.peers.openai_compatible import Misbehaving, misbehaving_server

KEY = "sk-gateway-test-0123456789"
QUESTION = [ChatMessage(role="user", content="How long are invoices kept?")]


@pytest.fixture
def flaky() -> Iterator[str]:
    with misbehaving_server() as root:
        yield root


def gateway_over_stdio(providers: list[Provider]) -> StdioServerParameters:
    # Keys travel in the environment, never in argv; the child inherits nothing else secret.
    environment = {
        "PATH": os.environ["PATH"],
        **providers_environment(providers),
        **keys_environment(providers),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ui.launcher", "gateway"], env=environment
    )


def test_the_gateway_streams_a_real_answer_over_mcp_stdio(llama_server: str) -> None:
    provider = Provider("llama", llama_server, ("qwen-mini",), KEY)

    async def scenario() -> tuple[list[str], object]:
        deltas: list[str] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            deltas.append(message or "")

        async with Client(gateway_over_stdio([provider])) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["chat"].output_schema is not None
            result = await client.call_tool(
                "chat",
                {
                    "messages": [{"role": "user", "content": "Name three colours."}],
                    "model": "llama/qwen-mini",
                    "max_tokens": 24,
                },
                read_timeout_seconds=120,
                progress_callback=on_progress,
            )
        assert not result.is_error, result.content
        return deltas, result.structured_content

    deltas, structured = asyncio.run(scenario())
    assert isinstance(structured, dict)
    assert len(deltas) >= 3  # it streamed: one progress message per delta
    assert "".join(deltas) == structured["text"]
    assert structured["provider"] == "llama"
    assert structured["finish_reason"] in ("stop", "length")
    usage = structured["usage"]
    assert usage["completion_tokens"] == len(deltas)
    assert usage["estimated"] is True  # llama.cpp's server sends no usage while streaming
    assert usage["prompt_tokens"] > 0


def test_a_provider_error_arrives_as_a_clear_tool_error(flaky: str) -> None:
    provider = Provider("acme", f"{flaky}/unauthorized/v1", ("m",), KEY)

    async def scenario() -> tuple[bool, str]:
        async with Client(gateway_over_stdio([provider])) as client:
            result = await client.call_tool(
                "chat", {"messages": [{"role": "user", "content": "hi"}], "model": "m"}
            )
        return result.is_error, " ".join(getattr(c, "text", "") for c in result.content)

    is_error, text = asyncio.run(scenario())
    assert is_error
    assert "acme rejected the API key (HTTP 401)" in text
    assert KEY not in text


def chat(root: str, scenario: str, timeouts: Timeouts | None = None) -> tuple[str, list[str]]:
    async def run() -> tuple[str, list[str]]:
        deltas: list[str] = []

        async def relay(delta: str) -> None:
            deltas.append(delta)

        provider = Provider("acme", f"{root}/{scenario}/v1", ("flaky-1",), KEY)
        async with httpx.AsyncClient() as client:
            gateway = OpenAICompatibleGateway([provider], client, timeouts or Timeouts())
            result = await gateway.chat(QUESTION, "acme/flaky-1", 64, 0.0, relay)
        return result.model_dump_json(), deltas

    return asyncio.run(run())


def test_provider_usage_is_passed_through(flaky: str) -> None:
    result, deltas = chat(flaky, "ok")
    assert deltas == ["Seven", " years", "."]
    assert '"usage":{"prompt_tokens":42,"completion_tokens":3,"estimated":false}' in result
    assert '"finish_reason":"stop"' in result


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ("unauthorized", "acme rejected the API key (HTTP 401): "),
        ("missing", "acme does not know the model 'flaky-1' (HTTP 404)"),
        ("limited", "acme is rate-limiting requests (HTTP 429)"),
        ("broken", "acme failed with a server error (HTTP 503)"),
        ("cut", "the stream from acme was cut off mid-answer after 11 characters"),
    ],
)
def test_each_provider_failure_has_its_own_message(flaky: str, scenario: str, message: str) -> None:
    with pytest.raises(ProviderError) as failure:
        chat(flaky, scenario)
    assert message in str(failure.value)
    assert KEY not in str(failure.value)


def test_a_429_is_retried_once_after_retry_after(flaky: str) -> None:
    result, _ = chat(flaky, "limited-once")
    assert '"text":"Seven years."' in result
    assert Misbehaving.calls["limited-once"] == 2
    with pytest.raises(ProviderError):
        chat(flaky, "limited")
    assert Misbehaving.calls["limited"] == 2  # once more, then it gives up


def test_a_stalled_provider_times_out_with_the_reason(flaky: str) -> None:
    with pytest.raises(ProviderError, match=r"acme has not started answering within 0\.5 s"):
        chat(flaky, "stalled", Timeouts(connect_s=2.0, first_token_s=0.5, total_s=5.0))


def test_an_unreachable_provider_and_an_unknown_model_are_named(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match=r"cannot reach acme at http://127\.0\.0\.1:9/x/v1"):
        chat("http://127.0.0.1:9", "x")
    gateway = OpenAICompatibleGateway([Provider("acme", "http://h/v1", ("a",), None)], None)  # type: ignore[arg-type]
    with pytest.raises(
        ProviderError, match=r"no provider serves the model 'b' \(configured: acme/a\)"
    ):
        gateway.resolve("b")
