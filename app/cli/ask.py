"""`docent ask`: the answer streams, then its sources and its route, time and cost; `--json`
prints one object instead. `--continue` and `--conversation ID` make it a follow-up."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import Any

from app.answering import (
    Citation,
    DraftReplaced,
    Failed,
    Finished,
    InConversation,
    RouteDecided,
    SourcesFound,
    Status,
    Token,
    Waiting,
)
from app.answering.conversation import Conversation
from app.answering.desk import NoConversation
from app.bootstrap import Docent
from app.cli.documents import UsageError, resolve
from app.cli.terminal import printable, printable_json
from app.llm.engine import CancelToken
from app.routing import Route


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ask = commands.add_parser("ask", help="ask a question; the answer streams with its sources")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print one JSON object instead")
    ask.add_argument(
        "--route",
        choices=["local", "cloud"],
        default=None,
        help="answer on this route instead of the router's choice",
    )
    ask.add_argument(
        "--doc",
        action="append",
        default=[],
        metavar="DOCUMENT",
        help="limit the question to a document (id, path or file name); repeatable",
    )
    follow = ask.add_mutually_exclusive_group()
    follow.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="a follow-up in the last conversation (each plain ask starts a new one)",
    )
    follow.add_argument(
        "--conversation", type=int, metavar="ID", help="a follow-up in this conversation"
    )


def stop_on_interrupt() -> CancelToken:
    """Ctrl+C stops the answer (or summary) being written: what was written is kept."""
    cancel = CancelToken()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows: KeyboardInterrupt
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, cancel.cancel)
    return cancel


async def ask(docent: Docent, arguments: argparse.Namespace) -> int:
    question: str = arguments.question
    as_json: bool = arguments.json
    route: Route | None = arguments.route
    desk = docent.desk
    try:
        if arguments.continue_last:
            conversation = await desk.latest()
        elif arguments.conversation is not None:
            conversation = await desk.open(arguments.conversation)
        else:
            conversation = Conversation()
    except NoConversation as none:
        raise UsageError(f"{none}: ask without --continue") from None
    names = arguments.doc
    scope = [d.id for d in await resolve(docent, names)] if names else None
    cancel = stop_on_interrupt()
    out = sys.stdout
    result: dict[str, Any] = {"question": question}
    status = 0
    events = desk.ask(question, scope, route=route, conversation=conversation, cancel=cancel)
    async for event in events:
        match event:
            case InConversation(conversation_id=conversation_id, standalone=standalone):
                result |= {"conversation_id": conversation_id, "standalone": standalone}
                if standalone != question and not as_json:
                    print(f"[searched for: {printable(standalone)}]", file=sys.stderr)
            case SourcesFound(sources=sources):
                result["sources"] = [s.as_dict() | {"text": s.text} for s in sources]
            case RouteDecided(route=chosen, model=model, reason=reason):
                if "route" in result and not as_json:  # a fallback: say so before its answer
                    print(f"\n[{chosen}: {printable(reason)}]", file=sys.stderr)
                result["route"] = {"route": chosen, "model": model, "reason": reason}
                result.setdefault("routes", []).append(result["route"])
            case Waiting(ahead=ahead) if not as_json:
                print(f"[waiting for the local model: {ahead} ahead]", file=sys.stderr)
            case Status(text=text) if not as_json:
                print(f"[{printable(text)}]", file=sys.stderr)
            case Token(text=text) if not as_json:
                out.write(printable(text))
                out.flush()
            case Citation():
                pass  # listed after the answer, from Finished
            case DraftReplaced(reason=reason) if not as_json:
                print(f"\n[{printable(reason)}]", file=sys.stderr)
            case Finished(answer=answer, citations=citations, metrics=metrics) as finished:
                result |= {
                    "answer": answer,
                    "citations": [c.as_dict() for c in citations],
                    "metrics": metrics.as_dict(),
                    "cancelled": finished.cancelled,
                    "grounded": finished.grounded,
                    "unsupported_draft": finished.unsupported_draft,
                    "history_id": finished.history_id,
                    "sent": None
                    if finished.sent is None
                    else [{"role": m.role, "content": m.content} for m in finished.sent],
                }
                if not as_json:
                    if finished.cancelled:
                        out.write(" [stopped]")
                    if finished.unsupported_draft is not None:  # streamed above: disowned here
                        out.write(f"\n\n{printable(answer)}\n")
                    out.write("\n\nSources:\n")
                    cited = {c.number for c in citations}
                    for source in result.get("sources", []):
                        mark = "*" if source["number"] in cited else " "
                        out.write(f" {mark}[{source['number']}] {printable(source['where'])}\n")
                    grounded = finished.grounded
                    if finished.unsupported_draft is None and grounded is not None and grounded < 1:
                        out.write(
                            f"\nNote: the sources support {grounded:.0%} of this "
                            "answer's sentences; check the rest against the documents.\n"
                        )
                    out.write("\n" + printable(metrics.footer()) + "\n")
            case Failed(error=error):
                result["error"] = error
                status = 1
                if not as_json:
                    print(f"docent: {printable(error)}", file=sys.stderr)
    if notice := docent.chat.take_notice():  # safe settings taken after a crash, say
        result["notice"] = notice
        if not as_json:
            print(f"docent: {printable(notice)}", file=sys.stderr)
    if as_json:
        out.write(printable_json(result) + "\n")
    return status
