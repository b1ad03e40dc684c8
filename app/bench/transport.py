"""`docent bench transport`: MCP's transports on loopback, and what polling would cost instead.

A small MCP server (this module, `python -m app.bench.transport serve TRANSPORT [PORT]`) offers
`ping`, `stream` (partial text as progress messages, as Docent's gateway sends an answer) and
`start`/`poll` (the same text, fetched by polling). Measured per transport: the round trip of a
trivial call and the latency of the first partial; then, over Streamable HTTP, the first partial
when a client polls every 50 / 250 / 1000 ms, and how many requests one answer costs that way.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from app.bench.common import Measure
from app.cloud.client import McpConnection
from app.processes import free_loopback_port, own_module, serving
from app.settings import McpServerSettings

TRANSPORTS = ("stdio", "sse", "streamable-http")
# One answer, as a model would produce it: the first partial after a 300 ms prefill, then ten
# partials 100 ms apart. Streamed and polled answers are produced at exactly this pace.
PARTS, PREFILL_MS, INTERVAL_MS = 10, 300, 100


def build_server() -> MCPServer:
    server: MCPServer = MCPServer("docent-bench")
    jobs: dict[str, list[str]] = {}
    tasks: set[asyncio.Task[None]] = set()
    numbers = itertools.count(1)

    async def produce(
        parts: list[str], count: int, on_part: Callable[[int], Awaitable[None]] | None = None
    ) -> None:
        await asyncio.sleep(PREFILL_MS / 1000)  # the pace of a model generating
        for index in range(count):
            if index:
                await asyncio.sleep(INTERVAL_MS / 1000)
            parts.append(f"part {index} ")
            if on_part is not None:
                await on_part(index)

    @server.tool()
    async def ping() -> str:
        return "pong"

    @server.tool()
    async def stream(ctx: Context, parts: int = PARTS) -> str:
        """Partial text as progress messages, at a model's pace."""
        produced: list[str] = []

        async def send(index: int) -> None:
            await ctx.report_progress(index + 1, parts, produced[index])

        await produce(produced, parts, send)
        return "".join(produced)

    @server.tool()
    async def start(parts: int = PARTS) -> str:
        """The same text, produced in the background for `poll` to fetch."""
        job = str(next(numbers))
        jobs[job] = []
        task = asyncio.ensure_future(produce(jobs[job], parts))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        return job

    @server.tool()
    async def poll(job: str) -> str:
        return "".join(jobs.get(job, []))

    return server


def settings(transport: str, url: str = "") -> McpServerSettings:
    return McpServerSettings(
        name=f"bench-{transport}",
        transport=transport,
        command=sys.executable if transport == "stdio" else "",
        args=own_module("app.bench.transport", "serve", "stdio")[1:]
        if transport == "stdio"
        else [],
        url=url,
        chat_tool="stream",
        models=["none"],
    )


@contextmanager
def http_server(transport: str, log: Path) -> Iterator[str]:
    port = free_loopback_port()
    command = own_module("app.bench.transport", "serve", transport, str(port))
    with serving(command, "Uvicorn running on", log, timeout_s=60):
        yield f"http://127.0.0.1:{port}{'/sse' if transport == 'sse' else '/mcp'}"


@asynccontextmanager
async def session(server: McpServerSettings) -> AsyncIterator[McpConnection]:
    connection = McpConnection(server)
    connection.start()
    try:
        await connection.wait_ready(60)
        yield connection
    finally:
        await connection.close()


@asynccontextmanager
async def connected(transport: str, work: Path) -> AsyncIterator[McpConnection]:
    """A session to the bench server over `transport` (HTTP ones: a server process of its own)."""
    if transport == "stdio":
        async with session(settings("stdio")) as connection:
            yield connection
        return
    with http_server(transport, work / f"{transport}.log") as url:
        async with session(settings(transport, url)) as connection:
            yield connection


async def first_partial(connection: McpConnection) -> float:
    arrived = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        arrived.set()

    started = time.perf_counter()
    call = asyncio.ensure_future(connection.call_tool("stream", {"parts": 2}, on_progress))
    await arrived.wait()
    latency = time.perf_counter() - started
    await call
    return latency


async def polled(connection: McpConnection, interval_s: float) -> tuple[float, int]:
    """First partial latency and requests spent on one whole answer, polling every interval."""
    started = time.perf_counter()
    job = _text(await connection.call_tool("start", {}, None))
    requests, first = 1, None
    while True:
        text = _text(await connection.call_tool("poll", {"job": job}, None))
        requests += 1
        if text and first is None:
            first = time.perf_counter() - started
        if text.count("part") == PARTS:
            assert first is not None
            return first, requests
        await asyncio.sleep(interval_s)  # the polling client's interval: what is measured


def _text(result: Any) -> str:
    return "".join(getattr(item, "text", "") for item in result.content)


async def bench_transport(*, quick: bool) -> list[Measure]:
    calls = 30 if quick else 200
    partials = 10 if quick else 50
    measures: list[Measure] = []
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as folder:
        for transport in TRANSPORTS:
            print(f"{transport} …", flush=True)
            async with connected(transport, Path(folder)) as connection:
                for _ in range(5):  # warm-up
                    await connection.call_tool("ping", {}, None)
                round_trip = Measure(f"{transport}: round trip (ping)", "ms", compare="none")
                for _ in range(calls):
                    started = time.perf_counter()
                    await connection.call_tool("ping", {}, None)
                    round_trip.docent.append((time.perf_counter() - started) * 1000)
                partial = Measure(
                    f"{transport}: first partial (after a {PREFILL_MS} ms prefill)",
                    "ms",
                    compare="none",
                )
                for _ in range(partials):
                    partial.docent.append(await first_partial(connection) * 1000)
                measures += [round_trip, partial]
                if transport == "streamable-http":
                    measures += await _polling(connection, quick, partial)
    return measures


async def _polling(connection: McpConnection, quick: bool, streamed: Measure) -> list[Measure]:
    measures = []
    for interval_ms in (50, 250, 1000):
        latency = Measure(
            f"polling every {interval_ms} ms: first partial",
            "ms",
            baseline=list(streamed.docent),
            baseline_name="streamed (progress messages)",
            compare="ratio",
        )
        requests = Measure(
            f"polling every {interval_ms} ms: requests per answer", "", compare="none"
        )
        for _ in range(2 if quick else 5):
            first, count = await polled(connection, interval_ms / 1000)
            latency.docent.append(first * 1000)
            requests.docent.append(count)
        measures += [latency, requests]
    return measures


def serve(arguments: Sequence[str]) -> None:
    transport = arguments[0]
    server = build_server()
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run(transport, host="127.0.0.1", port=int(arguments[1]))  # type: ignore[call-overload]


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2:])
