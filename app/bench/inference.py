"""`docent bench inference`: the table people compare local and cloud models by, measured on
this machine with these models: TTFT by prompt length, prefill and decode tok/s, and what 1, 2,
4 and 6 concurrent requests do to each request and to the total.

The local route serves one request at a time (llama.cpp has one context here) and queues the
rest, telling each how many are ahead: total throughput holds, each later request starts later.
Every configured cloud route is measured the same way, through Docent's MCP client.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from app.bench.common import filler, one_request
from app.bootstrap import Docent
from app.llm.engine import (
    ChatEngine,
    EngineError,
    GenerationRequest,
)
from app.llm.local import LocalEngine


@dataclass
class RouteResult:
    route: str
    model: str
    lengths: list[dict[str, Any]] = field(default_factory=list)
    concurrency: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # why a part stopped early


Progress = Callable[[str, int, int], None]  # what is being measured, requests done, of total


@dataclass
class Plan:
    lengths: Sequence[int]  # prompt lengths, in tokens
    levels: Sequence[int]  # numbers of concurrent requests
    repeats: int
    max_tokens: int
    progress: Progress
    variants: Iterator[int] = field(default_factory=lambda: iter(range(1, 1_000_000)))
    total: int = 0  # requests in the whole run
    done: int = 0
    step: str = ""

    @property
    def requests_per_route(self) -> int:
        return 1 + sum(self.levels) + len(self.lengths) * self.repeats  # 1: the warm-up

    def request(self, tokens: int) -> GenerationRequest:
        return filler(tokens, next(self.variants), self.max_tokens)

    def report(self, step: str | None = None, done: int = 0) -> None:
        self.step = step or self.step
        self.done += done
        self.progress(self.step, self.done, self.total)


async def measure_route(route: str, engine: ChatEngine, plan: Plan) -> RouteResult:
    """Each part keeps what it measured up to a failure (a deadline, a provider that cuts off
    streams) and records why it stopped; the other part still runs."""
    result = RouteResult(route, engine.model)
    ends_at = plan.done + plan.requests_per_route
    for part, step in ((_concurrency, "concurrent requests"), (_lengths, "prompt lengths")):
        plan.report(f"{route} ({engine.model}): {step}")
        try:
            await part(result, engine, plan)
        except EngineError as error:
            result.errors.append(f"{part.__name__.strip('_')}: {error}")
            plan.report(f"{route} ({engine.model}): stopped early: {error}")
    plan.report(done=ends_at - plan.done)  # requests a failure skipped count as done
    return result


async def _concurrency(result: RouteResult, engine: ChatEngine, plan: Plan) -> None:
    await one_request(engine, plan.request(64))  # warm-up: first-call costs
    plan.report(done=1)
    single: float | None = None
    for level in plan.levels:
        requests = [plan.request(plan.lengths[0]) for _ in range(level)]
        started = time.perf_counter()
        samples = list(await asyncio.gather(*(one_request(engine, r) for r in requests)))
        wall = time.perf_counter() - started
        plan.report(done=level)
        aggregate = sum(s.completion_tokens for s in samples) / wall
        single = single or aggregate
        per_request = [r for s in samples if (r := s.decode_tok_s) is not None]
        result.concurrency.append(
            {
                "requests": level,
                "ttft_s": sorted(s.ttft_s for s in samples),
                "ttft_median_s": statistics.median(s.ttft_s for s in samples),
                "aggregate_tok_s": aggregate,
                "per_request_decode_tok_s": statistics.median(per_request) if per_request else None,
                "aggregate_vs_one": aggregate / single,
            }
        )


async def _lengths(result: RouteResult, engine: ChatEngine, plan: Plan) -> None:
    for length in plan.lengths:
        samples = []
        for _ in range(plan.repeats):
            samples.append(await one_request(engine, plan.request(length)))
            plan.report(done=1)
        ttfts = [s.ttft_s for s in samples]
        prompt = samples[0].prompt_tokens
        rates = [r for s in samples if (r := s.decode_tok_s) is not None]
        result.lengths.append(
            {
                "target_tokens": length,
                "prompt_tokens": prompt,
                "ttft_s": ttfts,
                "ttft_median_s": statistics.median(ttfts),
                "prefill_tok_s": prompt / statistics.median(ttfts),
                "decode_tok_s": statistics.median(rates) if rates else None,
            }
        )


def print_progress(step: str, done: int, total: int) -> None:
    print(f"[{done}/{total}] {step}", flush=True)


async def bench_inference(
    docent: Docent, *, quick: bool, progress: Progress = print_progress
) -> dict[str, Any]:
    """The local route, then every healthy cloud route; `progress` hears each request done."""

    def plan() -> Plan:
        if quick:
            return Plan((256, 1024), (1, 2), repeats=1, max_tokens=16, progress=progress)
        return Plan((256, 1024, 4096), (1, 2, 4, 6), repeats=3, max_tokens=32, progress=progress)

    cloud = []
    if (opened := await docent.desk.cloud()) is not None:
        for model in opened.models():
            if model.healthy:
                cloud.append(model.model)
            else:
                progress(f"cloud ({model.model}): skipped: {model.detail}", 0, 0)
    run = plan()
    run.total = run.requests_per_route * (1 + len(cloud))
    # Room for the longest prompt and the answer, whatever the user's context setting.
    config = await asyncio.to_thread(docent.chat.config)  # may join the model files: seconds
    config = replace(config, n_ctx=max(docent.settings.local.n_ctx, 8192))
    local = LocalEngine(config)
    await local.start()
    routes: list[RouteResult] = []
    try:
        routes.append(await measure_route("local", local, run))
    finally:
        await local.close()
    if docent.cloud is not None:
        for name in cloud:
            routes.append(await measure_route("cloud", docent.cloud.engine(name), run))
    return {"routes": [asdict(route) for route in routes]}


def render_inference(results: dict[str, Any]) -> str:
    lines: list[str] = []
    for route in results["routes"]:
        lines += [f"### {route['route']}: {route['model']}", ""]
        if route["errors"]:
            lines += [f"Stopped early: {error}" for error in route["errors"]] + [""]
        lines += [
            "| prompt tokens | TTFT (median) | prefill tok/s | decode tok/s |",
            "|---|---|---|---|",
        ]
        for row in route["lengths"]:
            decode = row["decode_tok_s"]
            lines.append(
                f"| {row['prompt_tokens']} | {row['ttft_median_s']:.2f} s | "
                f"{row['prefill_tok_s']:.0f} | {'–' if decode is None else f'{decode:.1f}'} |"
            )
        lines += [
            "",
            "| concurrent requests | TTFT median (slowest) | aggregate tok/s | per request tok/s "
            "| aggregate vs 1 |",
            "|---|---|---|---|---|",
        ]
        for row in route["concurrency"]:
            per = row["per_request_decode_tok_s"]
            lines.append(
                f"| {row['requests']} | {row['ttft_median_s']:.2f} s ({row['ttft_s'][-1]:.2f} s)"
                f" | {row['aggregate_tok_s']:.1f} | {'–' if per is None else f'{per:.1f}'} | "
                f"{row['aggregate_vs_one']:.2f}x |"
            )
        lines.append("")
    return "\n".join(lines)
