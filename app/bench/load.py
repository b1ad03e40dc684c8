"""`docent bench load`: `docent serve-mcp --transport streamable-http` under load.

Eight MCP clients (the SDK's client, over Streamable HTTP with the bearer token) search most of
the time and ask now and then, for five minutes (45 s with --quick), while the window's library
(a Docent in this process, as the window has one) indexes and embeds a 500-page folder and a
second process runs `docent index` on another folder: three processes share one library.

Reported: calls made and failed, per tool; search and ask latency (p50, p95) and the longest
ask; "database is locked" wherever it could show (the server's log, the index process's output,
this process's indexing, the calls' errors); the documents expected against those the library
lists (none lost, none twice); and how the local model's queue (one answer at a time, first come
first served) treated the clients: each client's median ask, the asks answered out of order, and
what a waiting client is told while it waits.

Everything runs on 127.0.0.1 in a temporary DOCENT_HOME; the models come from the user's models
folder (nothing is downloaded into the temporary one), and the bearer token is kept in the
temporary home's key file, never in the user's keychain.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from app.bench.common import Measure, percentile, write_corpus
from app.bootstrap import Docent
from app.intake import EmbeddingFailed, FileFailed, FileIndexed
from app.paths import Paths
from app.processes import child_folder, free_loopback_port, own_module, serving
from app.samples import GUIDE, sample_path
from app.settings import Settings

CLIENTS = 8
LOCKED = "database is locked"
SERVER_READY = "Docent MCP server on"
# The key file stands in for a keychain (there may be none), and short answers keep each turn of
# the local model's queue to seconds on a small machine.
SETTINGS = {"secrets": {"plaintext_file_consent": True}, "local": {"max_tokens": 32}}
# An agent reads its results before it searches again; without a pause, eight clients would
# measure only how fast a loop can call.
SEARCH_PAUSE_S = (0.3, 1.2)
# The clients' first questions reach the queue in their numbers' order, a quarter second apart,
# so the order they should be answered in is known.
ASK_STAGGER_S = 0.25
ASK_TIMEOUT_S = 900.0  # behind seven other answers on a busy machine: minutes, not an error
# What a client would be shown while its question waits for the model (the CLI prints "[waiting
# for the local model: N ahead]"). Several words: one token of an answer never matches.
QUEUE_MESSAGE = re.compile(r"\d+ ahead|waiting for|in the queue|queue position", re.IGNORECASE)

QUERIES = (
    "How long are customer invoices kept?",
    "retention of payroll records",
    "when are passwords reviewed",
    "encryption of personal data",
    "incident reports and audit logs",
    "budgets approved each January",
    "access requests within 30 days",
    "firewalls are reviewed every quarter",
    "backups must be kept for seven years",
    "procurement and expenses of unit 12",
    "what the privacy board decided about consent",
    "contracts deleted after 24 months",
    "how is green tea made",
    "pseudonyms in archives",
    "security board meeting",
)
# Questions are made unique (see `question`): identical questions in flight share one answer
# (app/answering/cache.py), which would hide the model's queue this bench is here to see.
SUBJECTS = ("invoices", "payroll records", "passwords", "audit logs", "backups", "contracts")
ASKED_ABOUT = ("kept", "reviewed", "deleted", "approved", "encrypted")


@dataclass(frozen=True, slots=True)
class Plan:
    duration_s: float
    window_files: int  # the folder the window's library indexes: files × pages
    window_pages: int
    other_files: int  # the folder the second process indexes
    other_pages: int
    ask_pause_s: tuple[float, float]  # a client's pause between its answer and its next question
    settle_s: float  # how long indexing may go on after the clients stop


FULL = Plan(300, 10, 50, 2, 50, (20.0, 60.0), 900)
QUICK = Plan(45, 2, 20, 1, 10, (10.0, 20.0), 300)


@dataclass(slots=True)
class Call:
    client: int
    tool: str
    started_s: float  # since the load began
    seconds: float = 0.0
    error: str | None = None
    passages: int | None = None  # a search's
    # An ask's: when its first progress message came (s after the call), how many came, those
    # that speak of the queue, and how many other asks were in flight when it was sent.
    first_progress_s: float | None = None
    progress_messages: int = 0
    queue_messages: list[str] = field(default_factory=list)
    asks_in_flight: int = 0
    route: str | None = None  # the answer's route: "local", or "cache" for a shared answer

    @property
    def finished_s(self) -> float:
        return self.started_s + self.seconds


@dataclass(slots=True)
class Load:
    """What the clients share: the clock, every call, and the asks in flight."""

    plan: Plan
    started: float = field(default_factory=time.perf_counter)
    calls: list[Call] = field(default_factory=list)
    asks_in_flight: int = 0
    questions: set[str] = field(default_factory=set)

    def question(self, rng: random.Random) -> str:
        """A question no client has asked yet."""
        while True:
            asked = (
                f"How long are the {rng.choice(SUBJECTS)} of unit {rng.randint(1, 40)} "
                f"{rng.choice(ASKED_ABOUT)}?"
            )
            if asked not in self.questions:
                self.questions.add(asked)
                return asked

    def now(self) -> float:
        return time.perf_counter() - self.started

    @property
    def over(self) -> bool:
        return self.now() >= self.plan.duration_s


@dataclass(slots=True)
class Indexing:
    """One indexing run: how long it took and what went wrong."""

    pages: int
    seconds: float | None = None  # None: still running when the bench gave up waiting
    indexed: int = 0
    failures: list[str] = field(default_factory=list)
    exit_code: int | None = None


async def bench_load(*, quick: bool) -> dict[str, Any]:
    """The measures, the notes, and the calls themselves (for the JSON)."""
    plan = QUICK if quick else FULL
    models_dir = Paths.from_environment().models_dir  # the user's, before the home is replaced
    with tempfile.TemporaryDirectory(prefix="docent-bench-load-") as folder:
        work = Path(folder)
        environment = home_environment(work / "home", models_dir)
        paths = Paths.from_environment(environment)
        paths.create()
        paths.settings_file.write_text(json.dumps(SETTINGS), encoding="utf-8")
        window_folder = write_folder(work / "window", "window", plan.window_files, plan, seed=11)
        other_folder = write_folder(work / "other", "other", plan.other_files, plan, seed=23)
        samples = sample_path(GUIDE).parent
        print("seeding the library with the sample documents …", flush=True)
        seeded = await run_child(["index", str(samples)], environment, work / "seed.log")
        if seeded:
            raise RuntimeError(f"`docent index` of the samples failed; see {work / 'seed.log'}")
        port = free_loopback_port()
        url, token = await client_entry(environment, port)
        server_log = work / "server.log"
        command = own_module("app.cli", "serve-mcp", "--transport", "streamable-http")
        command += ["--port", str(port)]
        print(f"starting the MCP server; {CLIENTS} clients for {plan.duration_s:g} s …", flush=True)
        with serving(command, SERVER_READY, server_log, environment=environment, timeout_s=300):
            docent = Docent(paths, Settings.load(paths.settings_file))
            await docent.open()
            load = Load(plan)
            window = Indexing(plan.window_files * plan.window_pages)
            other = Indexing(plan.other_files * plan.other_pages)
            indexing = [
                asyncio.ensure_future(index_in_window(docent, window_folder, window)),
                asyncio.ensure_future(
                    index_in_child(other_folder, environment, work / "index.log", other)
                ),
            ]
            try:
                await asyncio.gather(*(client(n, url, token, load) for n in range(CLIENTS)))
                clients_s = load.now()
                print("clients done; waiting for indexing to finish …", flush=True)
                _, late = await asyncio.wait(indexing, timeout=plan.settle_s)
                for task in late:  # reported as unfinished: their documents count as lost
                    task.cancel()
                await asyncio.gather(*indexing, return_exceptions=True)
                listed = await docent.library.documents()
                unembedded = await docent.library.pending_embeddings()
            finally:
                for task in indexing:  # done already, unless the bench itself failed
                    task.cancel()  # which stops the index process, too (run_child)
                await asyncio.gather(*indexing, return_exceptions=True)
                await docent.close()
        expected = [*samples.iterdir(), *window_folder.iterdir(), *other_folder.iterdir()]
        logs = {
            "server log": server_log.read_text("utf-8", "replace"),
            "index process output": (work / "index.log").read_text("utf-8", "replace"),
        }
        return report(load, clients_s, window, other, expected, listed, unembedded, logs)


def home_environment(home: Path, models_dir: Path) -> dict[str, str]:
    """Every child's environment: the temporary home (each folder named, so no DOCENT_*_DIR of
    the user's applies), the user's models, and no keychain (the token goes in the key file)."""
    return {
        **os.environ,
        "DOCENT_HOME": str(home),
        "DOCENT_CONFIG_DIR": str(home / "config"),
        "DOCENT_DATA_DIR": str(home / "data"),
        "DOCENT_CACHE_DIR": str(home / "cache"),
        "DOCENT_MODELS_DIR": str(models_dir),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }


def write_folder(folder: Path, name: str, files: int, plan: Plan, seed: int) -> Path:
    """Generated report PDFs, named after their folder so a lost one says where it came from."""
    folder.mkdir()
    pages = plan.window_pages if name == "window" else plan.other_pages
    for number, path in enumerate(write_corpus(folder, files, pages, seed=seed), 1):
        path.rename(folder / f"{name}-{number}.pdf")
    return folder


async def run_child(arguments: Sequence[str], environment: dict[str, str], log: Path) -> int:
    """`docent ARGUMENTS` as a child process, its output in `log`; its exit code."""
    with log.open("wb") as output:
        process = await asyncio.create_subprocess_exec(
            *own_module("app.cli", *arguments),
            env=environment,
            cwd=child_folder(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            return await process.wait()
        finally:
            if process.returncode is None:  # cancelled: the bench gave up waiting for it
                process.terminate()
                await process.wait()


async def client_entry(environment: dict[str, str], port: int) -> tuple[str, str]:
    """The server's URL and bearer token, as `serve-mcp --print-config` gives a client."""
    process = await asyncio.create_subprocess_exec(
        *own_module("app.cli", "serve-mcp", "--transport", "streamable-http"),
        *("--port", str(port), "--print-config"),
        env=environment,
        cwd=child_folder(),
        stdout=asyncio.subprocess.PIPE,
    )
    printed, _ = await process.communicate()
    if process.returncode:
        raise RuntimeError(f"serve-mcp --print-config failed (exit {process.returncode})")
    entry = json.loads(printed)["mcpServers"]["docent"]
    return entry["url"], entry["headers"]["Authorization"].removeprefix("Bearer ")


# --- the load -------------------------------------------------------------------------------


async def index_in_window(docent: Docent, folder: Path, outcome: Indexing) -> None:
    """The window's way: the folder added to the library, then embedded."""
    started = time.perf_counter()
    try:
        async for event in docent.intake.index([folder], embed=True):
            if isinstance(event, FileIndexed):
                outcome.indexed += 1
            elif isinstance(event, FileFailed):
                outcome.failures.append(f"{event.path.name}: {event.reason}")
            elif isinstance(event, EmbeddingFailed):
                outcome.failures.append(f"embedding: {event.reason}")
    except Exception as error:  # a failure is what the bench reports, not a reason to stop
        outcome.failures.append(f"{type(error).__name__}: {error}")
    else:
        outcome.seconds = time.perf_counter() - started


async def index_in_child(
    folder: Path, environment: dict[str, str], log: Path, outcome: Indexing
) -> None:
    started = time.perf_counter()
    outcome.exit_code = await run_child(["index", str(folder)], environment, log)
    outcome.seconds = time.perf_counter() - started
    if outcome.exit_code:
        outcome.failures.append(f"`docent index` exited with status {outcome.exit_code}")


async def client(number: int, url: str, token: str, load: Load) -> None:
    """One MCP client: searches in a loop and, alongside, one question at a time."""
    rng = random.Random(number)
    async with AsyncExitStack() as stack:
        record = Call(number, "connect", load.now())
        try:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=httpx2.Timeout(30, read=ASK_TIMEOUT_S),
                )
            )
            session = await stack.enter_async_context(
                Client(streamable_http_client(url, http_client=http))
            )
        except Exception as error:  # counted as a failed call; this client does no more
            record.error = f"{type(error).__name__}: {error}"
            load.calls.append(record)
            return
        await call(load, Call(number, "list_documents", load.now()), session, {})
        await asyncio.gather(
            search_loop(session, number, load, rng), ask_loop(session, number, load, rng)
        )


async def call(
    load: Load,
    record: Call,
    session: Client,
    arguments: dict[str, Any],
    **options: Any,
) -> CallToolResult | None:
    """Call a tool, timed; an error (the tool's or the connection's) is kept on `record`."""
    load.calls.append(record)
    started = time.perf_counter()
    result = None
    try:
        result = await session.call_tool(record.tool, arguments, **options)
    except Exception as error:  # the failure is the measurement
        record.error = f"{type(error).__name__}: {error}"
    else:
        if result.is_error:
            record.error = "".join(c.text for c in result.content if isinstance(c, TextContent))
    record.seconds = time.perf_counter() - started
    return None if record.error else result


async def search_loop(session: Client, number: int, load: Load, rng: random.Random) -> None:
    while not load.over:
        record = Call(number, "search_documents", load.now())
        arguments = {"query": rng.choice(QUERIES), "k": rng.choice((3, 5, 8))}
        if result := await call(load, record, session, arguments):
            record.passages = len((result.structured_content or {}).get("passages", []))
        await asyncio.sleep(rng.uniform(*SEARCH_PAUSE_S))


async def ask_loop(session: Client, number: int, load: Load, rng: random.Random) -> None:
    """Ask, wait for the answer, pause, ask again while the load lasts (at least once)."""
    await asyncio.sleep(number * ASK_STAGGER_S)
    while True:
        record = Call(number, "ask", load.now(), asks_in_flight=load.asks_in_flight)
        await ask_once(session, load, record, load.question(rng))
        pause = rng.uniform(*load.plan.ask_pause_s)
        if load.now() + pause >= load.plan.duration_s:
            return
        await asyncio.sleep(pause)


async def ask_once(session: Client, load: Load, record: Call, question: str) -> None:
    sent = time.perf_counter()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        if record.first_progress_s is None:
            record.first_progress_s = time.perf_counter() - sent
        record.progress_messages += 1
        if message and QUEUE_MESSAGE.search(message):
            record.queue_messages.append(message)

    load.asks_in_flight += 1
    try:
        answer = await call(
            load,
            record,
            session,
            {"question": question},
            read_timeout_seconds=ASK_TIMEOUT_S,
            progress_callback=progress,
        )
    finally:
        load.asks_in_flight -= 1
    if answer is not None:
        record.route = (answer.structured_content or {}).get("metrics", {}).get("route")


# --- the report -----------------------------------------------------------------------------

TOOLS = ("list_documents", "search_documents", "ask")


def report(
    load: Load,
    clients_s: float,
    window: Indexing,
    other: Indexing,
    expected: Sequence[Path],
    listed: Sequence[Any],
    unembedded: int,
    logs: dict[str, str],
) -> dict[str, Any]:
    calls = load.calls
    failed = [c for c in calls if c.error]
    measures: list[Measure] = []
    notes: list[str] = []

    def add(name: str, unit: str, values: Sequence[float], target: str = "") -> None:
        if values:
            measures.append(Measure(name, unit, docent=list(values), target=target))
        else:
            notes.append(f"{name}: nothing to measure")

    add("clients, all the time", "clients", [CLIENTS])
    add("load duration (until the last call ended)", "s", [clients_s])
    for tool in TOOLS:
        made = [c for c in calls if c.tool == tool]
        add(f"{tool}: calls", "calls", [len(made)])
        add(f"{tool}: failed", "calls", [sum(1 for c in made if c.error)], "0")
    add("failed calls, every tool (connections too)", "calls", [len(failed)], "0")

    searches = [c for c in calls if c.tool == "search_documents" and not c.error]
    search_ms = [c.seconds * 1000 for c in searches]
    for q in (50, 95):
        add(f"search latency p{q}", "ms", [percentile(search_ms, q)] if search_ms else [])
    add("searches per second (all clients)", "1/s", [len(searches) / clients_s])
    add("searches with no passage", "calls", [sum(1 for c in searches if not c.passages)], "0")

    asks = [c for c in calls if c.tool == "ask" and not c.error]
    ask_s = [c.seconds for c in asks]
    for q in (50, 95):
        add(f"ask latency p{q}", "s", [percentile(ask_s, q)] if ask_s else [])
    add("longest ask (its wait in the queue included)", "s", [max(ask_s, default=0.0)])
    silent = [c.first_progress_s for c in asks if c.first_progress_s is not None]
    add("ask: time to its first progress message, max", "s", [max(silent, default=0.0)])
    add(
        "asks in flight at once, max",
        "asks",
        [1 + max((c.asks_in_flight for c in asks), default=0)],
    )

    per_client = [
        statistics.median(mine)
        for n in range(CLIENTS)
        if (mine := [c.seconds for c in asks if c.client == n])
    ]
    asked = {c.client for c in asks}
    add("clients that got an answer", "clients", [len(asked)], str(CLIENTS))
    add("ask latency, each client's median", "s", per_client)
    if per_client and min(per_client) > 0:
        add(
            "fairness: slowest / fastest client's median ask",
            "x",
            [max(per_client) / min(per_client)],
        )
    add(
        "asks answered before one sent earlier",
        "asks",
        [overtaken(asks)],
        "0 (first come, first served)",
    )
    add(
        "asks not answered by the local model", "asks", [sum(c.route != "local" for c in asks)], "0"
    )
    shown = [m for c in asks for m in c.queue_messages]
    waited = [c for c in asks if c.asks_in_flight]
    add("queue messages received by the asks that waited", "messages", [len(shown)])

    locked = {source: text.lower().count(LOCKED) for source, text in logs.items()}
    locked["this process's indexing"] = sum(f.lower().count(LOCKED) for f in window.failures)
    locked["the calls' errors"] = sum((c.error or "").lower().count(LOCKED) for c in calls)
    for source, count in locked.items():
        add(f"'{LOCKED}': {source}", "times", [count], "0")
    tracebacks = {source: text.count("Traceback") for source, text in logs.items()}
    for source, count in tracebacks.items():
        add(f"tracebacks: {source}", "times", [count], "0")

    expected_paths = Counter(str(p.resolve()) for p in expected)
    listed_paths = Counter(str(Path(d.path).resolve()) for d in listed)
    lost = sorted(set(expected_paths) - set(listed_paths))
    twice = sorted(p for p, n in listed_paths.items() if n > 1)
    same_content = sum(n - 1 for n in Counter(d.sha256 for d in listed).values() if n > 1)
    add("documents expected (samples + both folders)", "documents", [len(expected_paths)])
    add("documents the library lists", "documents", [len(listed)])
    add("documents lost", "documents", [len(lost)], "0")
    add(
        "documents listed twice (same path or same content)",
        "documents",
        [len(twice) + same_content],
        "0",
    )
    add("chunks left without a vector", "chunks", [unembedded], "0")
    for label, run in (("the window's library", window), ("the second process", other)):
        if run.seconds is None:
            notes.append(
                f"{label} had not finished indexing {load.plan.settle_s:g} s after the load"
            )
        else:
            add(f"indexing by {label}: {run.pages} pages", "s", [run.seconds])
        notes += [f"{label}: {failure}" for failure in run.failures[:5]]

    notes.append(queue_note(asks, waited, shown))
    if lost:
        notes.append("lost: " + ", ".join(Path(p).name for p in lost[:10]))
    if twice:
        notes.append("listed twice: " + ", ".join(Path(p).name for p in twice[:10]))
    for (tool, error), times in Counter((c.tool, c.error) for c in failed).most_common(5):
        notes.append(f"failed {tool} ({times}×): {error}"[:400])
    return {
        "measures": measures,
        "notes": notes,
        "details": {
            "plan": asdict(load.plan),
            "calls": [asdict(c) for c in calls if c.tool != "search_documents"],
            "search_ms": search_ms,
            "database_locked": locked,
            "documents": {"lost": lost, "listed_twice": twice, "same_content": same_content},
            "indexing": {"window": asdict(window), "second_process": asdict(other)},
        },
    }


def overtaken(asks: Sequence[Call]) -> int:
    """Asks that finished before another sent at least a stagger earlier had finished: each is
    a place lost in a first-come, first-served queue (retrieval runs before the queue, so sends
    closer together than that may fairly swap)."""
    return sum(
        1
        for later in asks
        if any(
            earlier.started_s + ASK_STAGGER_S <= later.started_s
            and later.finished_s < earlier.finished_s
            for earlier in asks
        )
    )


def queue_note(asks: Sequence[Call], waited: Sequence[Call], shown: Sequence[str]) -> str:
    """How the queue shows to a client waiting in it: said in words, from what the clients got."""
    if not asks:
        return "no ask was answered: the queue could not be observed"
    silent = [c.first_progress_s for c in waited if c.first_progress_s is not None]
    longest = f"{max(silent):.1f} s" if silent else "no time"
    if shown:
        return (
            f"a waiting client is told its place (a progress message): {len(shown)} queue "
            f"messages reached the {len(waited)} asks sent while others were in flight, e.g. "
            f"{shown[0]!r}"
        )
    return (
        f"a waiting client is told nothing: {len(waited)} of {len(asks)} asks were sent while "
        "other asks were in flight, and none received a queue message; a waiting client hears "
        f"nothing until the answer's first token (up to {longest} after it asked), then the "
        "tokens stream as progress messages. The server's ask tool drops the answerer's Waiting "
        "event, which the CLI prints as '[waiting for the local model: N ahead]'"
    )
