"""Docent's MCP client against a server nobody here wrote (`server-everything`, npm) over stdio,
Streamable HTTP and SSE; health, back-off, cancel, sampling; and the cloud route end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent

from app.cloud.client import McpChatEngine, McpConnection
from app.cloud.gateway import Provider, keys_environment
from app.cloud.health import Health
from app.cloud.pricing import Price, PriceTable
from app.cloud.routes import gateway_server
from app.llm.engine import (
    CancelToken,
    GenerationDone,
    GenerationRequest,
    Message,
    StatusReported,
    TokenGenerated,
)
from app.settings import McpServerSettings
from tests.peers.everything import everything_http, everything_stdio


def text_of(result: object) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))  # type: ignore[attr-defined]


async def connected(settings: McpServerSettings, **options: object) -> McpConnection:
    connection = McpConnection(settings, **options)  # type: ignore[arg-type]
    connection.start()
    await connection.wait_ready(30)
    return connection


async def gateway(providers: list[Provider]) -> McpConnection:
    """Docent's own gateway, connected as the app connects it: keys in its environment only."""
    return await connected(
        gateway_server(providers), secret_environment=keys_environment(providers)
    )


async def exercise(connection: McpConnection) -> None:
    """List, call, progress, cancel mid-call, and the session is still usable after."""
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= set(connection.tools)
    assert text_of(await connection.call_tool("echo", {"message": "héllo 你好"}, None)) == (
        "Echo: héllo 你好"
    )
    assert text_of(await connection.call_tool("get-sum", {"a": 2, "b": 40}, None)).endswith("42.")

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    await connection.call_tool(
        "trigger-long-running-operation", {"duration": 0.4, "steps": 4}, on_progress
    )
    assert progress == [1.0, 2.0, 3.0, 4.0]

    first_step = asyncio.Event()

    async def note_first(value: float, total: float | None, message: str | None) -> None:
        first_step.set()

    long_call = asyncio.ensure_future(
        connection.call_tool(
            "trigger-long-running-operation", {"duration": 60, "steps": 60}, note_first
        )
    )
    await asyncio.wait_for(first_step.wait(), 10)
    long_call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await long_call
    assert text_of(await connection.call_tool("echo", {"message": "still here"}, None)) == (
        "Echo: still here"
    )


def test_stdio_interop_with_server_everything() -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        connection = await connected(
            everything_stdio(), listener=lambda health: seen.append(health.state)
        )
        await exercise(connection)
        await connection.close()
        return seen

    assert asyncio.run(scenario()) == ["connecting", "ready", "closed"]


@pytest.mark.parametrize(
    ("transport", "kind"), [("streamableHttp", "streamable-http"), ("sse", "sse")]
)
def test_http_interop_with_server_everything(transport: str, kind: str, tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        settings = everything_stdio(transport=kind, url=url, command="", args=[])
        connection = await connected(settings, key="bearer-for-everything")
        await exercise(connection)
        await connection.close()

    with everything_http(transport, tmp_path / "everything.log") as url:
        asyncio.run(scenario(url))


def test_a_sampling_request_is_refused_cleanly_or_answered() -> None:
    async def answer(context: object, params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="Paris"), model="test"
        )

    async def scenario() -> tuple[str, str]:
        refusing = await connected(everything_stdio())
        refused = await refusing.call_tool(
            "trigger-sampling-request", {"prompt": "Capital of France?", "maxTokens": 5}, None
        )
        await refusing.close()
        answering = await connected(everything_stdio(), sampling=answer)
        answered = await answering.call_tool(
            "trigger-sampling-request", {"prompt": "Capital of France?", "maxTokens": 5}, None
        )
        await answering.close()
        return text_of(refused), text_of(answered)

    refused, answered = asyncio.run(scenario())
    assert "sampling refused" in refused
    assert "Paris" in answered


def test_an_unstartable_server_is_failed_with_the_reason_and_retried() -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        failed_twice = asyncio.Event()  # failed, backed off, retried, failed again

        def listen(health: Health) -> None:
            seen.append(health.describe())
            if sum("failed" in state for state in seen) == 2:
                failed_twice.set()

        settings = everything_stdio(command="/nowhere/mcp-server")
        connection = McpConnection(settings, listener=listen, backoff_s=(0.05,))
        connection.start()
        await asyncio.wait_for(failed_twice.wait(), 30)
        with pytest.raises(Exception, match="cannot start '/nowhere/mcp-server'"):
            await connection.call_tool("echo", {"message": "x"}, None)
        await connection.close()
        return seen

    seen = asyncio.run(scenario())
    assert seen[:2] == [
        "everything: connecting",
        "everything: failed (cannot start '/nowhere/mcp-server': No such file or directory)",
    ]
    assert seen[-1] == "everything: closed"


def test_a_server_without_the_chat_tool_is_reported() -> None:
    async def scenario() -> str:
        connection = McpConnection(everything_stdio(chat_tool="chat"), backoff_s=(60,))
        connection.start()
        with pytest.raises(Exception, match="has no tool named 'chat'"):
            await connection.wait_ready(30)
        detail = connection.health.detail
        await connection.close()
        return detail

    assert asyncio.run(scenario()).startswith("it has no tool named 'chat' (it has: echo, ")


REQUEST = GenerationRequest(
    [Message("system", "Answer briefly."), Message("user", "Name three colours.")], 24, 0.0
)


def test_the_cloud_route_streams_through_the_gateway_with_cost(llama_server: str) -> None:
    prices = PriceTable({"llama/qwen-mini": Price(1.0, 2.0)})

    async def scenario() -> list[object]:
        connection = await gateway([Provider("llama", llama_server, ("qwen-mini",), "sk-x")])
        engine = McpChatEngine(connection, "llama/qwen-mini", prices.cost)
        events = [event async for event in engine.stream(REQUEST, CancelToken())]
        await connection.close()
        return events

    events = asyncio.run(scenario())
    tokens = [e for e in events if isinstance(e, TokenGenerated)]
    done = events[-1]
    assert isinstance(done, GenerationDone)
    assert len(tokens) >= 3
    assert done.completion_tokens == len(tokens)
    assert done.first_token_at is not None
    assert done.last_token_at is not None
    assert done.first_token_at < done.last_token_at  # streamed, not whole
    assert done.cost_usd == pytest.approx(
        (done.prompt_tokens * 1.0 + done.completion_tokens * 2.0) / 1e6
    )


def test_a_server_set_to_auto_learns_from_its_first_answer_that_progress_is_text(
    llama_server: str,
) -> None:
    """Docent's gateway configured as any server ("auto"): its first answer's progress is shown
    as status, its result extends their text, so later answers stream."""
    providers = [Provider("llama", llama_server, ("qwen-mini",), None)]
    settings = gateway_server(providers).model_copy(update={"progress": "auto"})

    async def scenario() -> tuple[list[object], bool | None, list[object]]:
        connection = await connected(settings, secret_environment=keys_environment(providers))
        engine = McpChatEngine(connection, "llama/qwen-mini", PriceTable({}).cost)
        first = [event async for event in engine.stream(REQUEST, CancelToken())]
        learned = connection.progress_is_text
        second = [event async for event in engine.stream(REQUEST, CancelToken())]
        await connection.close()
        return first, learned, second

    first, learned, second = asyncio.run(scenario())
    statuses = [e.text for e in first if isinstance(e, StatusReported)]
    (whole,) = [e.text for e in first if isinstance(e, TokenGenerated)]
    assert len(statuses) >= 3
    assert whole == "".join(statuses)  # until it was known, text showed as status, once
    assert learned is True
    assert not any(isinstance(e, StatusReported) for e in second)
    assert len([e for e in second if isinstance(e, TokenGenerated)]) >= 3  # streamed now


def test_a_server_that_streams_nothing_still_answers_whole() -> None:
    settings = everything_stdio(
        first_token_timeout_s=0,
        arguments={"messages": "", "prompt": "message", "model": "", "max_tokens": "",
                   "temperature": ""},
    )  # fmt: skip

    async def scenario() -> list[object]:
        connection = await connected(settings)
        engine = McpChatEngine(connection, "echo", PriceTable({}).cost)
        events = [event async for event in engine.stream(REQUEST, CancelToken())]
        await connection.close()
        return events

    events = asyncio.run(scenario())
    (token,) = [e for e in events if isinstance(e, TokenGenerated)]
    assert token.text == "Echo: system: Answer briefly.\n\nuser: Name three colours."
    done = events[-1]
    assert isinstance(done, GenerationDone)
    assert done.first_token_at == done.last_token_at  # TTFT = total
    assert done.cost_usd is None  # "echo" has no price: unknown, not free


def test_stop_cancels_a_cloud_answer_mid_stream(llama_server: str) -> None:
    async def scenario() -> list[object]:
        connection = await gateway([Provider("llama", llama_server, ("qwen-mini",), None)])
        engine = McpChatEngine(connection, "llama/qwen-mini", PriceTable({}).cost)
        cancel = CancelToken()
        long = GenerationRequest([Message("user", "Count from 1 to 200, one per line.")], 400, 0.0)
        events: list[object] = []
        async for event in engine.stream(long, cancel):
            events.append(event)
            if sum(isinstance(e, TokenGenerated) for e in events) == 2:
                cancel.cancel()
        await connection.close()
        return events

    events = asyncio.run(scenario())
    assert sum(isinstance(e, TokenGenerated) for e in events) <= 4
    done = events[-1]
    assert isinstance(done, GenerationDone)
    assert done.finish_reason == "cancelled"
