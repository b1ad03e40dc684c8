"""Probe a third-party MCP server that wraps an OpenAI-compatible chat endpoint, as Docent would
reach it: over stdio, with the MCP SDK's client, against llama.cpp's OpenAI-compatible server on
127.0.0.1. Records the tools and their input schemas, every progress notification (with its time
since the call), the final CallToolResult, and — with --docent — what Docent's own cloud engine
(`McpChatEngine`) streams to the user from the same server today.

    .venv/bin/python -m tests.peers.llm.probe houtini [--base-url URL | --gguf FILE] [--long]
        [--docent] [--out FILE.json]

Without --base-url it starts `python -m llama_cpp.server` on a free port (the bundled chat GGUF,
or --gguf) and stops it by PID at the end. The servers are installed outside the project's venv
(see README.md beside this file): Node ones under tests/peers/llm/node_modules, Python ones in
scratch venvs under /tmp (their `mcp`/`fastmcp` pins differ from Docent's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import TextContent

ROOT = Path(__file__).resolve().parents[3]
NODE = ROOT / "tests/peers/node/node_modules/node/bin/node"
HERE = Path(__file__).resolve().parent
VENVS = Path(os.environ.get("LLM_PEER_VENVS", "/tmp"))
# Any non-empty string: llama.cpp's server checks no key; some peers refuse to start without one.
DUMMY_KEY = "local-llama-no-key"

SHORT = "Reply with exactly: The invoices are kept for seven years."
# ~1,000 tokens of excerpt, so prefill on a 2-core CPU outlasts a 10 s keep-alive.
PASSAGE = (
    " ".join(
        f"Section {i}. Invoices, receipts and ledgers of the Harbour Office are filed by month; "
        f"each file is checked by the clerk on duty and then archived in cabinet {i % 7}."
        for i in range(1, 36)
    )
    + " The retention rule: invoices are kept for seven years, then shredded."
)
LONG = f"Excerpt:\n{PASSAGE}\n\nQuestion: how long are invoices kept? Answer in one sentence."
SYSTEM = "Answer from the excerpt only, in one short sentence."


@dataclass
class Peer:
    """How one server is launched and called; `docent` is its McpServerSettings.arguments."""

    command: str
    args: list[str]
    env: dict[str, str]
    tool: str
    arguments: Any  # (base_url, model, prompt, system, max_tokens) -> dict
    key_env: str = ""
    docent: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None


def _root(base_url: str) -> str:
    """…/v1 → the server's root (peers that append /v1/chat/completions themselves)."""
    return base_url.removesuffix("/").removesuffix("/v1")


def peers(base_url: str, model: str, home: str) -> dict[str, Peer]:
    return {
        # npm @houtini/lm — progress messages are status strings; the answer is the result.
        "houtini": Peer(
            command=str(NODE),
            args=[str(HERE / "node_modules/@houtini/lm/dist/index.js")],
            env={
                "HOUTINI_LM_ENDPOINT_URL": _root(base_url),
                "HOUTINI_LM_MODEL": model,
                "HOME": home,  # it keeps a SQLite model cache and a lock in ~/.houtini-lm
            },
            key_env="HOUTINI_LM_API_KEY",
            tool="chat",
            arguments=lambda b, m, p, s, n: {
                "message": p,
                "system": s,
                "model": m,
                "max_tokens": n,
                "temperature": 0,
            },
            docent={
                "messages": "",
                "prompt": "message",
                "model": "model",
                "max_tokens": "max_tokens",
                "temperature": "temperature",
            },
        ),
        # PyPI agent-spawn-mcp — FastMCP (mcp 1.x), no progress, no max_tokens argument.
        "agent-spawn": Peer(
            command=str(VENVS / "llmpeers-agentspawn/bin/agent-spawn-mcp"),
            args=["main", "--url", base_url, "--model", model],
            env={},
            key_env="OPENAI_TOKEN",
            tool="chat",
            arguments=lambda b, m, p, s, n: {"prompt": p, "system_prompt": s, "model": m},
            docent={
                "messages": "",
                "prompt": "prompt",
                "model": "model",
                "max_tokens": "",
                "temperature": "",
            },
            cwd=home,
        ),
        # PyPI mcp-llm-gateway — fastmcp, no progress; returns the raw chat.completion JSON.
        "llm-gateway": Peer(
            command=str(VENVS / "llmpeers-gateway/bin/mcp-llm-gateway"),
            args=[],
            env={
                "DOWNSTREAM_URL": _root(base_url),
                "DEFAULT_MODEL": model,
                "LOG_DIR": home,
                "MODEL_LIST_URL": "http://127.0.0.1:9/none",  # default is a public URL
            },
            key_env="API_KEY",
            tool="complete",
            arguments=lambda b, m, p, s, n: {
                "prompt": p if not s else f"{s}\n\n{p}",
                "model": m,
                "max_tokens": n,
                "temperature": 0,
            },
            docent={
                "messages": "",
                "prompt": "prompt",
                "model": "model",
                "max_tokens": "max_tokens",
                "temperature": "temperature",
            },
            cwd=home,
        ),
        # PyPI openai-compatible-mcp — frames stdio with Content-Length headers (LSP style), not
        # newline-delimited JSON as MCP's stdio transport does: a conforming client never connects.
        "openai-compatible": Peer(
            command=str(VENVS / "llmpeers-oacm/bin/openai-compatible-mcp"),
            args=[],
            env={
                "OPENAI_COMPATIBLE_MCP_BASE_URL": _root(base_url),
                "OPENAI_COMPATIBLE_MCP_DEFAULT_MODEL": model,
            },
            key_env="OPENAI_COMPATIBLE_MCP_API_KEY",
            tool="chat",
            arguments=lambda b, m, p, s, n: {
                "messages": [{"role": "user", "content": p}],
                "system": s,
                "model": m,
                "max_tokens": n,
                "temperature": 0,
            },
            docent={
                "messages": "messages",
                "prompt": "",
                "model": "model",
                "max_tokens": "max_tokens",
                "temperature": "temperature",
            },
            cwd=home,
        ),
    }


def bundled_gguf(home: str) -> str:
    """The bundled chat model, assembled into a throwaway DOCENT_HOME (kept until the end)."""
    code = (
        "from app.bootstrap import Docent; "
        "print(Docent.from_environment(embeddings=False).chat.config().path)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=os.environ | {"DOCENT_HOME": home},
        check=True,
    )
    return out.stdout.strip().splitlines()[-1]


def start_llama(gguf: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    from app.processes import free_loopback_port

    port = free_loopback_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        gguf,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
    ]
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited: see {log}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
            return process, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(1)
    process.kill()
    raise SystemExit("llama_cpp.server did not start in 180 s")


def first_model(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url}/models", timeout=10) as response:
        return str(json.load(response)["data"][0]["id"])


def baseline(base_url: str, model: str, prompt: str, system: str, max_tokens: int) -> dict:
    """The same question streamed from the endpoint directly: time to first text, total."""
    body = json.dumps(
        {
            "model": model,
            "stream": True,
            "max_tokens": max_tokens,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt},
            ],
        }
    )
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    first = None
    text = []
    with urllib.request.urlopen(request, timeout=600) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
            if delta and first is None:
                first = time.perf_counter() - started
            text.append(delta)
    return {"first_text_s": first, "total_s": time.perf_counter() - started, "text": "".join(text)}


async def probe(
    peer: Peer, model: str, prompt: str, system: str, max_tokens: int, connect_timeout_s: float
) -> dict[str, Any]:
    env = peer.env | ({peer.key_env: DUMMY_KEY} if peer.key_env else {})
    params = StdioServerParameters(command=peer.command, args=peer.args, env=env, cwd=peer.cwd)
    report: dict[str, Any] = {
        "launch": {"command": peer.command, "args": peer.args, "env": env, "cwd": peer.cwd}
    }
    started = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        try:
            async with asyncio.timeout(connect_timeout_s):
                client = await stack.enter_async_context(Client(params))
        except Exception as error:  # a report, not a crash
            report["connect_error"] = f"{type(error).__name__}: {error!r}"[:2000]
            report["connect_s"] = time.perf_counter() - started
            return report
        report["connect_s"] = time.perf_counter() - started
        listed = await client.list_tools()
        report["tools"] = [
            {
                "name": t.name,
                "description": (t.description or "")[:300],
                "inputSchema": t.input_schema,
                "outputSchema": t.output_schema,
            }
            for t in listed.tools
        ]
        arguments = peer.arguments(None, model, prompt, system, max_tokens)
        report["arguments"] = arguments
        progress: list[dict[str, Any]] = []
        call_started = time.perf_counter()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(
                {
                    "t_s": round(time.perf_counter() - call_started, 3),
                    "progress": value,
                    "total": total,
                    "message": message,
                }
            )

        try:
            result = await client.call_tool(
                peer.tool, arguments, read_timeout_seconds=600, progress_callback=on_progress
            )
        except Exception as error:  # a report, not a crash
            report["progress"] = progress
            report["call_error"] = f"{type(error).__name__}: {error}"
            return report
        done = time.perf_counter() - call_started
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    report["progress"] = progress
    report["result"] = {
        "content_text": texts,
        "structured_content": result.structured_content,
        "is_error": result.is_error,
        "other_content": [c.type for c in result.content if not isinstance(c, TextContent)],
    }
    report["timing"] = {
        "first_progress_s": progress[0]["t_s"] if progress else None,
        "result_s": round(done, 3),
    }
    joined = "".join(p["message"] or "" for p in progress)
    final = "".join(texts)
    report["analysis"] = {
        "progress_count": len(progress),
        "messages_joined": joined,
        "result_extends_joined_progress": bool(joined) and final.startswith(joined),
        "answer_in_any_message": any(
            (p["message"] or "") and (p["message"] or "") in final for p in progress
        ),
    }
    return report


async def through_docent(
    name: str, peer: Peer, model: str, prompt: str, system: str, max_tokens: int
) -> dict[str, Any]:
    """What Docent's cloud engine streams from this server today (its settings mapped as the
    README's table says)."""
    from app.cloud.client import McpChatEngine, McpConnection
    from app.llm.engine import (
        CancelToken,
        GenerationDone,
        GenerationRequest,
        Message,
        TokenGenerated,
    )
    from app.settings import McpServerSettings

    settings = McpServerSettings(
        name=name,
        transport="stdio",
        command=peer.command,
        args=peer.args,
        env=peer.env,
        key_env=peer.key_env,
        chat_tool=peer.tool,
        arguments=peer.docent,
        models=[model],
        connect_timeout_s=60,
        first_token_timeout_s=30,
        timeout_s=600,
    )
    connection = McpConnection(settings, key=DUMMY_KEY if peer.key_env else None)
    connection.start()
    request = GenerationRequest(
        [Message("system", system), Message("user", prompt)], max_tokens, 0.0
    )
    tokens: list[dict[str, Any]] = []
    done: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        await connection.wait_ready(60)
        started = time.perf_counter()
        async for event in McpChatEngine(connection, model, lambda *_: 0.0).stream(
            request, CancelToken()
        ):
            if isinstance(event, TokenGenerated):
                tokens.append({"t_s": round(time.perf_counter() - started, 3), "text": event.text})
            elif isinstance(event, GenerationDone):
                done = {
                    "finish_reason": event.finish_reason,
                    "completion_tokens": event.completion_tokens,
                    "prompt_tokens": event.prompt_tokens,
                }
    except Exception as error:  # a report, not a crash
        done = {"error": f"{type(error).__name__}: {error}"}
    finally:
        await connection.close()
    return {
        "shown_to_user": "".join(t["text"] for t in tokens),
        "tokens": tokens,
        "done": done,
        "total_s": round(time.perf_counter() - started, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "server", choices=["houtini", "agent-spawn", "llm-gateway", "openai-compatible"]
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible …/v1 already running")
    parser.add_argument("--gguf", help="model for the llama.cpp server this starts")
    parser.add_argument("--model", help="model id to ask for (default: the server's first)")
    parser.add_argument("--long", action="store_true", help="a ~1,000-token excerpt question")
    parser.add_argument("--question", help="ask this instead (with --max-tokens for its length)")
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--docent", action="store_true", help="also run Docent's McpChatEngine")
    parser.add_argument("--baseline", action="store_true", help="also stream the endpoint directly")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment for the server (repeatable)",
    )
    parser.add_argument("--out", type=Path, help="write the report here as JSON")
    options = parser.parse_args()

    llama = None
    base_url = options.base_url
    work = tempfile.mkdtemp(prefix=f"probe-{options.server}-")
    try:
        if not base_url:
            llama, base_url = start_llama(
                options.gguf or bundled_gguf(str(Path(work, "docent"))), Path(work, "llama.log")
            )
        model = options.model or first_model(base_url)
        peer = peers(base_url, model, work)[options.server]
        peer.env |= dict(item.split("=", 1) for item in options.env)
        prompt, system = (LONG, SYSTEM) if options.long else (SHORT, "Be brief.")
        if options.question:
            prompt = options.question
        report: dict[str, Any] = {
            "server": options.server,
            "base_url": base_url,
            "model": model,
            "prompt_chars": len(prompt),
            "max_tokens": options.max_tokens,
        }
        if options.baseline:
            report["baseline"] = baseline(base_url, model, prompt, system, options.max_tokens)
        report["probe"] = asyncio.run(probe(peer, model, prompt, system, options.max_tokens, 60))
        if options.docent:
            report["docent"] = asyncio.run(
                through_docent(options.server, peer, model, prompt, system, options.max_tokens)
            )
    finally:
        if llama is not None:
            llama.terminate()
            try:
                llama.wait(10)
            except subprocess.TimeoutExpired:
                llama.kill()
        shutil.rmtree(work, ignore_errors=True)  # the assembled GGUF copy, the peers' caches
    text = json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if options.out:
        options.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
