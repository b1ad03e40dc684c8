"""Sessions to the configured MCP servers, and the chat engine that runs over them.

A session is opened when Docent starts (connecting costs seconds: a stdio child imports its
runtime), kept alive, reconnected with back-off, and closed on quit. Its health is observable.
Which tool runs a chat completion and how its arguments are named is configuration, so any MCP
server that wraps an LLM can be the cloud route.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext, SamplingFnT
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.types import (
    INVALID_REQUEST,
    CallToolResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    ErrorData,
    Implementation,
    TextContent,
)

from app.cjk import estimate_tokens
from app.cloud.health import Health, HealthListener, HealthState
from app.llm.engine import (
    CancelToken,
    EngineError,
    GenerationDone,
    GenerationEvent,
    GenerationRequest,
    PromptEvaluated,
    StatusReported,
    TokenGenerated,
    finish,
)
from app.processes import child_folder
from app.settings import McpServerSettings

BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
# How servers see us (the SDK would say "mcp 0.1.0").
CLIENT_INFO = Implementation(name="docent", title="Docent", version=version("docent"))


async def refuse_sampling(
    context: ClientRequestContext, params: CreateMessageRequestParams
) -> CreateMessageResult | ErrorData:
    """Servers may ask the client's model to generate (sampling); Docent says no, plainly,
    so a server that asks gets an answer instead of waiting."""
    return ErrorData(
        code=INVALID_REQUEST,
        message="Docent does not let MCP servers use its models (sampling refused)",
    )


class McpConnection:
    """One long-lived session to one MCP server."""

    def __init__(
        self,
        settings: McpServerSettings,
        key: str | None = None,
        listener: HealthListener | None = None,
        backoff_s: tuple[float, ...] = BACKOFF_S,
        sampling: SamplingFnT = refuse_sampling,
        auth: httpx2.Auth | None = None,
        secret_environment: Mapping[str, str] | None = None,
    ) -> None:
        """`secret_environment`: variables a stdio server gets beside its settings' own (keys:
        they never enter a settings object)."""
        self.settings = settings
        self._sampling = sampling
        self._auth = auth  # OAuth (app.cloud.oauth) for HTTP servers that ask for it
        self._key = key
        self._secret_environment = dict(secret_environment or {})
        self._listener = listener
        self._backoff_s = backoff_s
        self._client: Client | None = None
        self._settled = asyncio.Event()  # set while ready or failed, clear while connecting
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.health = Health(settings.name, HealthState.CLOSED)
        # Whether its progress messages are answer text; None until its first answer shows it.
        self.progress_is_text: bool | None = {"text": True, "status": False}.get(settings.progress)
        self.tools: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.settings.name

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._supervise())

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            await self._task
            self._task = None

    def _set(self, state: HealthState, detail: str = "") -> None:
        if self._key:
            detail = detail.replace(self._key, "…")
        self.health = Health(self.name, state, detail)
        if state is HealthState.CONNECTING:
            self._settled.clear()
        else:
            self._settled.set()
        if self._listener is not None:
            self._listener(self.health)

    async def _supervise(self) -> None:
        attempt = 0
        while not self._closing.is_set():
            self._set(HealthState.CONNECTING)
            try:
                async with contextlib.AsyncExitStack() as stack:
                    async with asyncio.timeout(self.settings.connect_timeout_s):
                        client = await stack.enter_async_context(
                            Client(
                                await self._transport(stack),
                                sampling_callback=self._sampling,
                                client_info=CLIENT_INFO,
                            )
                        )
                        listed = await client.list_tools()
                    self.tools = tuple(tool.name for tool in listed.tools)
                    if self.settings.chat_tool not in self.tools:
                        raise EngineError(
                            f"it has no tool named {self.settings.chat_tool!r} "
                            f"(it has: {', '.join(self.tools) or 'none'})"
                        )
                    self._client = client
                    attempt = 0
                    self._set(HealthState.READY, f"{len(self.tools)} tools")
                    await self._closing.wait()
            except Exception as error:  # any transport or protocol failure: report, retry
                self._client = None
                self._set(HealthState.FAILED, describe_failure(error, self.settings))
                delay = self._backoff_s[min(attempt, len(self._backoff_s) - 1)]
                attempt += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), delay)
            finally:
                self._client = None
        self._set(HealthState.CLOSED)

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        server = self.settings
        if server.transport == "stdio":
            environment = dict(server.env) | self._secret_environment
            if self._key and server.key_env:
                environment[server.key_env] = self._key  # in the environment, never in argv
            return StdioServerParameters(
                command=server.command, args=list(server.args), env=environment, cwd=child_folder()
            )
        headers = dict(server.headers)
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        if server.transport == "sse":
            return sse_client(
                server.url,
                headers=headers,
                timeout=server.connect_timeout_s,
                sse_read_timeout=server.timeout_s,
                auth=self._auth,
            )
        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=headers,
                timeout=httpx2.Timeout(server.connect_timeout_s, read=server.timeout_s),
                auth=self._auth,
            )
        )
        return streamable_http_client(server.url, http_client=http)

    async def wait_ready(self, timeout_s: float) -> Client:
        """The live session; fails at once (with the reason) while the server is down."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout_s)
        if self._client is None:
            raise EngineError(f"the MCP server {self.health.describe()}")
        return self._client

    async def call_tool(
        self, name: str, arguments: dict[str, Any], progress: ProgressFnT | None
    ) -> CallToolResult:
        client = await self.wait_ready(self.settings.connect_timeout_s)
        try:
            return await client.call_tool(
                name,
                arguments,
                read_timeout_seconds=self.settings.timeout_s,
                progress_callback=progress,
            )
        except MCPError as error:
            raise EngineError(
                f"{self.name} did not answer within {self.settings.timeout_s:g} s"
                if error.error.code == -32001
                else f"{self.name} failed the call: {error.error.message}"
            ) from None


def describe_failure(error: BaseException, settings: McpServerSettings) -> str:
    """A transport failure in a user's words (the SDK wraps them in exception groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    match error:
        case TimeoutError():
            return f"no answer within {settings.connect_timeout_s:g} s"
        case FileNotFoundError() | PermissionError():
            return f"cannot start {settings.command!r}: {error.strerror}"
        case httpx2.ConnectError():
            return f"cannot reach {settings.url}"
        case httpx2.HTTPStatusError():
            status = error.response.status_code
            refused = " (key refused)" if status in (401, 403) else ""
            return f"HTTP {status} from {settings.url}{refused}"
        case MCPError():
            return error.error.message
        case _:
            return str(error) or type(error).__name__


def tool_arguments(
    settings: McpServerSettings, request: GenerationRequest, model: str
) -> dict[str, Any]:
    """A chat request in the argument names the server's tool uses."""
    names = settings.arguments
    values: dict[str, Any] = {
        names.messages: [{"role": m.role, "content": m.content} for m in request.messages],
        names.prompt: "\n\n".join(f"{m.role}: {m.content}" for m in request.messages),
        names.model: model,
        names.max_tokens: request.max_tokens,
        names.temperature: request.temperature,
    }
    values.pop("", None)  # roles the tool has no argument for
    return values


@dataclass(frozen=True, slots=True)
class CloudAnswer:
    """What the tool returned besides the streamed text."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str


def read_result(result: CallToolResult, settings: McpServerSettings) -> CloudAnswer:
    """The answer in the shapes chat tools return: Docent's gateway (`text`, `usage`,
    `finish_reason`), an OpenAI `chat.completion` passed through (as structured content or as
    JSON text), or plain text, less the server's own footer (`footer_line`)."""
    text = "".join(item.text for item in result.content if isinstance(item, TextContent))
    if result.is_error:
        reason = text.removeprefix(f"Error executing tool {settings.chat_tool}: ")  # the SDK's
        raise EngineError(f"{settings.name}: {reason or 'the tool failed without a message'}")
    structured = result.structured_content or {}
    if not _chat_completion_choice(structured):
        # Passed through as JSON text; an answer that merely is JSON stays the answer.
        passed_through = _json_object(text) or {}
        structured = passed_through if _chat_completion_choice(passed_through) else structured
    usage = structured.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    finish_reason = structured.get("finish_reason", "stop")
    answer = structured.get("text", text)
    if completion := _chat_completion_choice(structured):
        answer = completion["message"]["content"]
        finish_reason = completion.get("finish_reason") or "stop"
    return CloudAnswer(
        text=_without_footer(str(answer), settings.footer_line),
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=str(finish_reason),
    )


# More tokens than any model reads or writes in one call: a count above it is not believed.
MAX_REPORTED_TOKENS = 10_000_000


def _count(reported: object) -> int | None:
    """A token count a server reported, if it is one: a third-party server's word decides the
    cost and the month's budget, so a negative, fractional, absurd or non-numeric count is
    ignored (the count is then estimated, as for a server that reports none)."""
    if isinstance(reported, bool) or not isinstance(reported, int):
        return None
    return reported if 0 <= reported <= MAX_REPORTED_TOKENS else None


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _chat_completion_choice(value: dict[str, Any]) -> dict[str, Any] | None:
    """The first choice of an OpenAI `chat.completion`, if `value` is one."""
    choices = value.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        return None
    message = choices[0].get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return choices[0]
    return None


def _without_footer(text: str, footer_line: str) -> str:
    """`text` up to its last line that reads `footer_line` (a server's own notes follow it)."""
    if not footer_line:
        return text
    lines = text.splitlines(keepends=True)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() == footer_line.strip():
            return "".join(lines[:index]).rstrip()
    return text


PriceLookup = Callable[[str, int, int], float | None]  # None: not in the price table


class McpChatEngine:
    """The cloud route: a chat tool on an MCP server, its progress messages as tokens."""

    route = "cloud"

    def __init__(
        self, connection: McpConnection, model: str, price: PriceLookup, model_id: str = ""
    ) -> None:
        """`model` as the server's tool expects it; `model_id` as the badge and the price
        table name it (default: the same)."""
        self.connection = connection
        self.model = model_id or model
        self._tool_model = model
        self._price = price

    async def stream(
        self, request: GenerationRequest, cancel: CancelToken
    ) -> AsyncIterator[GenerationEvent]:
        """Progress messages stream as answer text, or show as status when the server uses them
        for that (then the tool's result is the answer, and its arrival the first token). A
        server set to "auto" has its first answer's messages shown as status; its result then
        tells: if it extends their concatenation, they were text, and later answers stream."""
        connection = self.connection
        settings = connection.settings
        prompt_estimate = sum(estimate_tokens(m.content) for m in request.messages)
        yield PromptEvaluated(prompt_estimate)
        loop = asyncio.get_running_loop()
        messages: asyncio.Queue[str] = asyncio.Queue()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if message:
                messages.put_nowait(message)

        call = asyncio.ensure_future(
            connection.call_tool(
                settings.chat_tool, tool_arguments(settings, request, self._tool_model), on_progress
            )
        )

        def stop_the_call() -> None:  # may run on another thread (the GUI's Stop)
            loop.call_soon_threadsafe(call.cancel)

        cancel.on_cancel(stop_the_call)
        carries_text = connection.progress_is_text
        heard: list[str] = []  # every progress message, in order
        first_at: float | None = None  # of answer text
        last_at: float | None = None
        deadline = settings.first_token_timeout_s or None
        started = time.perf_counter()
        try:
            while not call.done() or not messages.empty():
                waiting = None if heard or deadline is None else deadline
                if waiting is not None:
                    waiting = max(0.0, waiting - (time.perf_counter() - started))
                next_message = asyncio.ensure_future(messages.get())
                done, _ = await asyncio.wait(
                    {next_message, call}, timeout=waiting, return_when=asyncio.FIRST_COMPLETED
                )
                if next_message in done:
                    heard.append(next_message.result())
                    if carries_text:
                        last_at = time.perf_counter()
                        first_at = first_at or last_at
                        yield TokenGenerated(heard[-1])
                    else:
                        yield StatusReported(heard[-1])
                    continue
                next_message.cancel()
                if not done:  # the deadline passed with nothing heard
                    call.cancel()
                    raise EngineError(
                        f"{settings.name} sent no text within {deadline:g} s "
                        "(set its first-token timeout to 0 if it does not stream)"
                    )
            answer = read_result(call.result(), settings)
        except asyncio.CancelledError:
            if not cancel.is_cancelled():
                raise
            answer = CloudAnswer("", None, None, "cancelled")  # what streamed is the answer
        finally:
            call.cancel()
        streamed = "".join(heard) if carries_text else ""
        if answer.finish_reason != "cancelled":
            if carries_text is None and heard:
                connection.progress_is_text = answer.text.startswith("".join(heard))
            if answer.text.startswith(streamed) and (rest := answer.text[len(streamed) :]):
                # A server that streams nothing (or not everything), or only status: the rest.
                last_at = time.perf_counter()
                first_at = first_at or last_at
                heard.append(rest)  # counted as one more chunk of text
                yield TokenGenerated(rest)
        prompt_tokens = answer.prompt_tokens or prompt_estimate
        # Without usage from the server: a text chunk per token, or the whole answer estimated.
        completion_tokens = answer.completion_tokens or (
            len(heard) if carries_text else estimate_tokens(answer.text)
        )
        yield GenerationDone(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            finish_reason=finish(answer.finish_reason),
            first_token_at=first_at,
            last_token_at=last_at,
            cost_usd=self._price(self.model, prompt_tokens, completion_tokens),
        )
