"""`docent summarize DOC`: the estimate first (stderr), then the summary streaming with its
progress, and the pages it cites; `--json` prints one object instead."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import Any

from app.answering import Citation, Failed, Finished, RouteDecided, SourcesFound, Status, Token
from app.answering.summary import Estimate, SummaryProgress
from app.answering.summary_request import chapter_request
from app.bootstrap import Docent
from app.index import DocumentInfo
from app.llm.engine import CancelToken
from app.terminal import printable, printable_json


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


async def summarize(
    docent: Docent,
    document: DocumentInfo,
    *,
    chapter: str | None,
    route: str | None,
    as_json: bool,
    estimate_only: bool,
) -> int:
    if route == "cloud" or estimate_only:
        await docent.cloud_session.ready()
    summarizer = await docent.summarizer()
    request = chapter_request(chapter)
    plan = await summarizer.plan(document.id, request)
    estimate = await docent.summary_estimate(summarizer, plan)
    result: dict[str, Any] = {
        "document": document.name,
        "part": request.part or None,
        "estimate": {
            "steps": estimate.steps,
            "prompt_tokens": estimate.prompt_tokens,
            "completion_tokens": estimate.completion_tokens,
            "local_s": estimate.local_s,
            "stored": estimate.stored,
            "cloud": [{"model": c.model, "cost_usd": c.cost_usd} for c in estimate.cloud],
        },
    }
    if estimate_only:
        if as_json:
            print(printable_json(result))
        else:
            print(printable("\n".join(describe(estimate))))
        return 0
    if not as_json:
        print(printable(" · ".join(describe(estimate))), file=sys.stderr)
    cancel = CancelToken()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows: KeyboardInterrupt
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, cancel.cancel)
    out = sys.stdout
    status = 0
    async for event in summarizer.summarize(plan, cancel, route):
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
