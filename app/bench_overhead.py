"""`docent bench overhead`: what Docent adds on top of calling the model directly.

Local: Docent's engine versus llama-cpp-python on the same model, prompt and settings (decode
ratio >= 0.95, TTFT within 30 ms), and the router's decision (< 10 ms). Cloud: Docent's route
(MCP client -> `docent gateway` over stdio -> the provider) versus one direct httpx streaming call
to the same OpenAI-compatible endpoint (TTFT within 15 ms). Runs alternate and are paired, so the
machine's drift cancels.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import httpx

from app.bench import Measure, bench_generation, bench_router
from app.bench_inference import filler, one_request
from app.bootstrap import Docent
from app.llm.engine import ChatEngine, GenerationRequest
from app.secrets import provider_key


async def direct_ttft(
    base_url: str, model: str, key: str | None, request: GenerationRequest
) -> float:
    """Time to the first content delta of one streaming call, made directly with httpx."""
    body = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    async with (
        httpx.AsyncClient(timeout=300) as client,
        client.stream(
            "POST", f"{base_url}/chat/completions", json=body, headers=headers
        ) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            for choice in json.loads(line[5:]).get("choices") or []:
                if (choice.get("delta") or {}).get("content"):
                    return time.perf_counter() - started
    raise RuntimeError(f"{base_url} streamed no content")


async def cloud_overhead(
    engine: ChatEngine,
    direct: Callable[[GenerationRequest], Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationRequest]],
) -> Measure:
    """Each side gets its own prompt of the same length: a provider that caches prompts (llama.cpp
    does) must not hand one side the other's prefill."""
    measure = Measure(
        f"cloud TTFT through the gateway ({engine.model})",
        "s",
        baseline_name="direct httpx stream",
        target="within 15 ms",
        compare="difference",
    )
    warm_ours, warm_direct = pairs[0]
    await one_request(engine, warm_ours)  # warm both paths: connections, sessions
    await direct(warm_direct)
    for attempt, (for_docent, for_direct) in enumerate(pairs[1:]):
        if attempt % 2:  # alternate who goes first: the machine drifts
            baseline = await direct(for_direct)
            ours = (await one_request(engine, for_docent)).ttft_s
        else:
            ours = (await one_request(engine, for_docent)).ttft_s
            baseline = await direct(for_direct)
        measure.docent.append(ours)
        measure.baseline.append(baseline)
    return measure


ROUTER_QUESTIONS = (
    "How long must invoices be kept?",
    "Compare the retention of payroll records with that of contracts, and explain why.",
    "发票需要保存多久？",
    "What is 15% of the budget, and who approves it?",
)


async def bench_overhead(docent: Docent, *, quick: bool) -> list[Any]:
    count = 3 if quick else 10
    tokens = 16 if quick else 32
    requests = [filler(256, variant, tokens) for variant in range(1, count + 1)]
    # Cloud pairs: distinct prompts (variants 100+), one warm-up pair first.
    pairs = [
        (filler(256, 100 + 2 * n, tokens), filler(256, 101 + 2 * n, tokens))
        for n in range(count + 1)
    ]
    print("local: Docent vs llama-cpp-python …", flush=True)
    measures = list(await bench_generation(docent, requests))
    measures.append(bench_router(ROUTER_QUESTIONS * 50, 3))
    await docent.start_cloud()
    if docent.cloud is not None:
        await docent.cloud.settled()
        secrets = await docent.secret_store()
        providers = {p.name: p for p in docent.settings.cloud.providers}
        for model in docent.cloud.models():
            name, _, provider_model = model.model.partition("/")
            provider = providers.get(name)
            if provider is None or not model.healthy:
                continue  # only gateway routes have a direct endpoint to compare with
            key = await asyncio.to_thread(secrets.get, provider_key(name))
            print(f"cloud: {model.model} via the gateway vs direct …", flush=True)

            direct = partial(direct_ttft, provider.base_url, provider_model, key)
            engine = docent.cloud.engine(model.model)
            measures.append(await cloud_overhead(engine, direct, pairs))
    return measures
