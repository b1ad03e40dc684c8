"""`docent summarize DOC`: the estimate first (stderr), then the summary streaming with its
progress, and the pages it cites; `--json` prints one object instead."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.answering import Citation, Failed, Finished, RouteDecided, SourcesFound, Status, Token
from app.answering.summary import Estimate, SummaryProgress
from app.bootstrap import Docent
from app.cli.ask import stop_on_interrupt
from app.cli.documents import resolve
from app.cli.terminal import printable, printable_json


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    summarize = commands.add_parser(
        "summarize", help="summarize a document, citing its pages (stored: instant next time)"
    )
    summarize.add_argument("document", metavar="DOCUMENT", help="id, path or file name")
    summarize.add_argument(
        "--chapter", default=None, help="only this chapter: its number or words of its heading"
    )
    summarize.add_argument(
        "--route",
        choices=["local", "cloud"],
        default=None,
        help="make it on this route (default: the stored summary, else the local model)",
    )
    summarize.add_argument(
        "--estimate", action="store_true", help="only say what it would take, and exit"
    )
    summarize.add_argument("--json", action="store_true", help="print one JSON object instead")


def describe(estimate: Estimate) -> list[str]:
    """The estimate in a few lines: local time, then each cloud model's cost."""
    lines = [
        f"{estimate.steps} step{'s' if estimate.steps != 1 else ''}, "
        f"up to {estimate.prompt_tokens:,} prompt + {estimate.completion_tokens:,} written tokens",
        f"local: {estimate.describe_local()}",
    ]
    if not estimate.cloud:
        lines.append("cloud: no cloud configured")
    for route in estimate.cloud:
        cost = "price unknown" if route.cost_usd is None else f"at most ${route.cost_usd:.4f}"
        lines.append(f"cloud {route.model}: {cost}")
    return lines


async def summarize(docent: Docent, arguments: argparse.Namespace) -> int:
    (document,) = await resolve(docent, [arguments.document])
    route: str | None = arguments.route
    as_json: bool = arguments.json
    job = await docent.desk.summary(document.id, arguments.chapter)
    estimate = job.estimate
    result: dict[str, Any] = {
        "document": document.name,
        "part": job.plan.request.part or None,
        "estimate": {
            "steps": estimate.steps,
            "prompt_tokens": estimate.prompt_tokens,
            "completion_tokens": estimate.completion_tokens,
            "local_s": estimate.local_s,
            "stored": estimate.stored,
            "cloud": [{"model": c.model, "cost_usd": c.cost_usd} for c in estimate.cloud],
        },
    }
    if arguments.estimate:
        if as_json:
            print(printable_json(result))
        else:
            print(printable("\n".join(describe(estimate))))
        return 0
    if not as_json:
        print(printable(" · ".join(describe(estimate))), file=sys.stderr)
    cancel = stop_on_interrupt()
    out = sys.stdout
    status = 0
    async for event in job.run(route, cancel=cancel):
        match event:
            case SummaryProgress(step=step, steps=steps, what=what) if not as_json:
                print(f"[{step}/{steps}: {printable(what)}]", file=sys.stderr)
            case RouteDecided(route=chosen, model=model, reason=reason):
                result["route"] = {"route": chosen, "model": model, "reason": reason}
            case Status(text=text) if not as_json:
                print(f"[{printable(text)}]", file=sys.stderr)
            case Token(text=text) if not as_json:
                out.write(printable(text))
                out.flush()
            case SourcesFound() | Citation():
                pass  # the cited pages are listed after the summary, from Finished
            case Finished(answer=summary, citations=citations, metrics=metrics) as finished:
                result |= {
                    "summary": summary,
                    "citations": [c.as_dict() for c in citations],
                    "metrics": metrics.as_dict(),
                    "cancelled": finished.cancelled,
                    "history_id": finished.history_id,
                }
                if not as_json:
                    out.write(" [stopped]\n" if finished.cancelled else "\n")
                    pages = ", ".join(dict.fromkeys(c.page_label for c in citations))
                    out.write(f"\nPages cited: {printable(pages) or 'none'}\n")
                    out.write("\n" + printable(metrics.footer()) + "\n")
            case Failed(error=error):
                result["error"] = error
                status = 1
                if not as_json:
                    print(f"docent: {printable(error)}", file=sys.stderr)
    if as_json:
        out.write(printable_json(result) + "\n")
    return status
