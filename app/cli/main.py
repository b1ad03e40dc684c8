"""`docent`: index documents, ask questions, summarize, keep conversations, list and remove
documents, benchmark, serve MCP. A module per command family, each adding its own subcommands:

- documents.py: `index`, `docs`, `remove` (and how a document's name is resolved)
- ask.py: `ask`;  summarize.py: `summarize`;  conversations.py: `conversations`, `history`
- models.py: `models`;  evaluate.py: `eval`
- here: `gateway`, `serve-mcp` and `bench`, which hand over to their own packages
- terminal.py: text made safe for a terminal, and the progress line

The desktop app starts from the `docent` launcher (ui.launcher), which hands every subcommand
here; `python -m app.cli gateway` is how Docent starts its cloud gateway child.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from app.bootstrap import EMBEDDED_LIBRARY, Docent
from app.cli import ask, conversations, documents, evaluate, library, models, summarize
from app.cli.documents import UsageError
from app.cli.terminal import printable
from app.errors import DocentError

Command = Callable[[Docent, argparse.Namespace], Awaitable[int]]
COMMANDS: dict[str, Command] = {
    "index": documents.index,
    "docs": documents.docs,
    "remove": documents.remove,
    "ask": ask.ask,
    "summarize": summarize.summarize,
    "conversations": conversations.conversations,
    "history": conversations.history,
    "eval": evaluate.evaluate_questions,
}
# These build no library of their own to name (`library` names its libraries itself).
NO_SHARED_LIBRARY = ("gateway", "models", "library")
# Listing, removing and reading conversations need no embedder: it is not loaded for them.
EMBEDDING_COMMANDS = ("index", "ask", "eval")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docent", description="Ask questions about your documents, with page citations."
    )
    parser.add_argument(
        "--library",
        metavar="URL",
        default=None,
        help="a shared library: postgresql://user@host/db (the password from the URL or the "
        "keychain entry 'library:URL'); the documents are read from and indexed into it, while "
        f"your history, conversations and queue stay in a local file. '{EMBEDDED_LIBRARY}': the "
        "library on this computer. Default: the one Settings → Library names",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("gui", help="open the desktop app (the default)")
    documents.add_parsers(commands)
    ask.add_parsers(commands)
    conversations.add_parsers(commands)
    summarize.add_parsers(commands)
    models.add_parsers(commands)
    evaluate.add_parsers(commands)
    library.add_parsers(commands)
    commands.add_parser(
        "gateway",
        help="serve Docent's cloud gateway (an MCP server) over stdio; the app starts it itself",
    )

    serve = commands.add_parser(
        "serve-mcp",
        help="serve the library to other MCP clients (tools: search_documents, read_page, "
        "list_documents, ask, summarize_document)",
    )
    serve.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    serve.add_argument(
        "--host",
        default=None,
        help="streamable-http: the address to bind (default 127.0.0.1); clients send a bearer "
        "token, made once and kept in the keychain, whatever the address",
    )
    serve.add_argument("--port", type=int, default=None, help="streamable-http: default 8765")
    serve.add_argument(
        "--new-token", action="store_true", help="replace the bearer token and show the new one"
    )
    serve.add_argument(
        "--print-config",
        action="store_true",
        help="print a client's configuration (for streamable-http: with the bearer token) and exit",
    )

    bench = commands.add_parser("bench", help="measure Docent against its baselines")
    bench.add_argument(
        "suite",
        choices=[
            "inference",
            "overhead",
            "transport",
            "ingest",
            "retrieval",
            "load",
            "folder",
            "gui",
        ],
        help="inference: local and cloud TTFT, prefill, decode and concurrency; overhead: "
        "Docent's routes vs the model called directly; transport: MCP over stdio, SSE and "
        "Streamable HTTP vs polling; ingest: indexing and embedding vs the raw libraries; "
        "retrieval: hybrid search latency and memory at 1k-100k chunks vs FTS5 and sqlite-vec; "
        "load: 8 MCP clients searching and asking over Streamable HTTP while two processes "
        "index (failures, latency, locks, lost documents, queue fairness); "
        "folder: 1,000 mixed documents from an empty library to fully searchable (total time, "
        "pages/s, shares of parse, OCR, embedding and writing); "
        "gui: GUI-thread stalls and cold start",
    )
    bench.add_argument(
        "--documents", type=int, default=None, help="folder: how many documents (default 1000)"
    )
    bench.add_argument(
        "--chunks",
        type=int,
        default=None,
        help="retrieval: one library of this many chunks (default 1k, 10k and 100k; with "
        "--library 10k and 100k, and past 100k two writers add the last 20k to a library "
        "filled in bulk)",
    )
    bench.add_argument("--quick", action="store_true", help="a CI-sized run")
    bench.add_argument("--out", type=Path, default=None, help="write results.json here")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    if arguments.command in (None, "gui"):
        raise UsageError("the desktop app starts from the `docent` launcher (ui.launcher)")
    try:
        if arguments.library is not None and (
            arguments.command in NO_SHARED_LIBRARY
            or (arguments.command == "bench" and arguments.suite != "retrieval")
        ):
            raise UsageError(f"--library does not apply to `{arguments.command}`")
        if arguments.command == "library":  # names its libraries itself (--from, --to, URL)
            return library.library(arguments)
        if arguments.command == "gateway":  # stdout belongs to the MCP protocol from here on
            from app.cloud.gateway import serve_stdio

            return serve_stdio()
        if arguments.command == "serve-mcp":  # over stdio, stdout is the protocol's too
            from app.serving.run import serve_mcp

            return serve_mcp(
                arguments.transport,
                arguments.host,
                arguments.port,
                arguments.new_token,
                arguments.print_config,
                arguments.library,
            )
        return asyncio.run(_dispatch(arguments))
    except DocentError as error:
        print(f"docent: {printable(str(error))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("docent: interrupted", file=sys.stderr)
        return 130


async def _dispatch(arguments: argparse.Namespace) -> int:
    if arguments.command == "bench":
        from app.bench.run import run_bench

        return await run_bench(
            arguments.suite,
            quick=arguments.quick,
            out=arguments.out,
            documents=arguments.documents,
            chunks=arguments.chunks,
            # The bench makes its libraries itself: a server only when named here.
            library=None if arguments.library == EMBEDDED_LIBRARY else arguments.library,
        )
    docent = Docent.from_environment(
        embeddings=arguments.command in EMBEDDING_COMMANDS, library=arguments.library
    )
    if arguments.command == "models":
        return models.models(docent, arguments)
    await docent.open()
    try:
        return await COMMANDS[arguments.command](docent, arguments)
    finally:
        await docent.close()
