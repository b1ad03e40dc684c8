"""`docent bench overhead`: what Docent adds on top of calling the model directly.

Local: Docent's engine versus llama-cpp-python on the same model, prompt and settings (decode
ratio >= 0.95, TTFT within 30 ms), and the router's decision (< 10 ms). Cloud: Docent's route
(MCP client -> `docent gateway` over stdio -> the provider) versus one direct httpx streaming call
to the same OpenAI-compatible endpoint (TTFT within 15 ms). Runs alternate and are paired, so the
machine's drift cancels.

A model's own TTFT varies by far more than 15 ms, so the cloud route is also measured on a
reference provider with a fixed pace (this module, `python -m app.bench.overhead serve PORT`): a
real OpenAI-compatible streaming server on loopback, whose first token always comes after
PACED_FIRST_TOKEN_MS. What is left of the difference is Docent's.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from app.bench.common import Measure, filler, one_request
from app.bench.follow_up import bench_follow_up
from app.bootstrap import Docent
from app.index import Passage, StoredChunk
from app.llm import native
from app.llm.engine import ChatEngine, GenerationRequest
from app.llm.local import LocalEngine
from app.processes import free_loopback_port, own_module, serving
from app.routing import AutoPolicy, CloudModel
from app.secrets import provider_key
from app.settings import CloudSettings, ProviderSettings, RoutingSettings
from app.workers import SerialWorker

# The reference provider's pace: a fast cloud model's first token, then one token every 10 ms.
PACED_FIRST_TOKEN_MS, PACED_INTERVAL_MS = 100, 10
PACED_MODEL = "paced/reference"


def paced_provider() -> Starlette:
    """An OpenAI-compatible /v1/chat/completions that streams `max_tokens` words at a fixed pace."""

    async def completions(request: Request) -> StreamingResponse:
        body = await request.json()
        count = int(body.get("max_tokens") or 16)

        def event(choice: dict[str, Any], **extra: Any) -> str:
            return f"data: {json.dumps({'model': body['model'], 'choices': [choice], **extra})}\n\n"

        async def events() -> AsyncIterator[str]:
            await asyncio.sleep(PACED_FIRST_TOKEN_MS / 1000)
            for index in range(count):
                if index:
                    await asyncio.sleep(PACED_INTERVAL_MS / 1000)
                yield event({"index": 0, "delta": {"content": f"word{index} "}})
            usage = {"prompt_tokens": 1, "completion_tokens": count, "total_tokens": count + 1}
            yield event({"index": 0, "delta": {}, "finish_reason": "length"}, usage=usage)
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@contextmanager
def paced_provider_process(log: Path) -> Iterator[str]:
    """The reference provider in a process of its own; yields its base URL."""
    port = free_loopback_port()
    command = own_module("app.bench.overhead", "serve", str(port))
    with serving(command, "Uvicorn running on", log, timeout_s=60):
        yield f"http://127.0.0.1:{port}/v1"


async def direct_ttft(
    client: httpx.AsyncClient,
    base_url: str,
    model: str,
    key: str | None,
    request: GenerationRequest,
) -> float:
    """Time to the first content delta of one streaming call, made directly with httpx (on a
    client kept open, as the gateway keeps its own: no TLS set-up or connection in the time)."""
    body = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.perf_counter()
    async with client.stream(
        "POST", f"{base_url}/chat/completions", json=body, headers=headers
    ) as response:
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
    label: str,
) -> Measure:
    """Each side gets its own prompt of the same length: a provider that caches prompts (llama.cpp
    does) must not hand one side the other's prefill."""
    measure = Measure(
        f"cloud TTFT through the gateway ({label})",
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


def recital(tokens: int, variant: int, max_tokens: int) -> GenerationRequest:
    """A filler prompt that asks for its sources back word for word: the answer runs to
    `max_tokens`, so decoding is timed over that many tokens (a one-sentence answer gave 15)."""
    return filler(
        tokens, variant, max_tokens, "Do the task.", "Task: copy the sources out word for word."
    )


async def bench_overhead(docent: Docent, *, quick: bool) -> list[Any]:
    count = 3 if quick else 10
    requests = [recital(256, variant, 16 if quick else 128) for variant in range(1, count + 1)]
    # Cloud pairs: distinct prompts (variants 100+), one warm-up pair first.
    pairs = [(filler(256, 100 + 2 * n, 16), filler(256, 101 + 2 * n, 16)) for n in range(count + 1)]
    print("local: Docent vs llama-cpp-python …", flush=True)
    measures = list(await bench_generation(docent, requests))
    # Single TTFTs of a 256-token prompt vary by +-0.3 s here; a short prompt's vary far less, so
    # its pairs resolve what Docent adds per request (its decode row would repeat the first).
    short = [filler(32, variant, 4) for variant in range(1, 2 * count + 1)]
    measures.insert(1, (await bench_generation(docent, short))[0])
    print("local: a conversation's follow-up vs the same prompt cold …", flush=True)
    measures.append(await bench_follow_up(docent, count))
    measures.append(bench_router(ROUTER_QUESTIONS * 50, 3))
    async with httpx.AsyncClient(timeout=300) as client:
        print("cloud: the gateway vs direct, on the paced reference provider …", flush=True)
        measures.append(await reference_overhead(docent, client, pairs))
        measures += await configured_overhead(docent, client, pairs)
    return measures


async def configured_overhead(
    docent: Docent,
    client: httpx.AsyncClient,
    pairs: Sequence[tuple[GenerationRequest, GenerationRequest]],
) -> list[Measure]:
    """Every healthy provider the user configured, through the gateway and directly."""
    if (routes := await docent.desk.cloud()) is None:
        return []
    secrets = await docent.secret_store()
    providers = {p.name: p for p in docent.settings.cloud.providers}
    measures = []
    for model in routes.models():
        name, _, provider_model = model.model.partition("/")
        provider = providers.get(name)
        if provider is None or not model.healthy:
            continue  # only gateway routes have a direct endpoint to compare with
        key = await asyncio.to_thread(secrets.get, provider_key(name))
        print(f"cloud: {model.model} via the gateway vs direct …", flush=True)
        direct = partial(direct_ttft, client, provider.base_url, provider_model, key)
        engine = routes.engine(model.model)
        measures.append(await cloud_overhead(engine, direct, pairs, model.model))
    return measures


async def reference_overhead(
    docent: Docent,
    client: httpx.AsyncClient,
    pairs: Sequence[tuple[GenerationRequest, GenerationRequest]],
) -> Measure:
    provider, _, model = PACED_MODEL.partition("/")
    with (
        tempfile.TemporaryDirectory(prefix="docent-bench-") as folder,
        paced_provider_process(Path(folder) / "provider.log") as base_url,
    ):
        reference = CloudSettings(
            providers=[ProviderSettings(name=provider, base_url=base_url, models=[model])]
        )
        routes = await docent.open_cloud_routes(reference)
        try:
            await routes.settled()
            direct = partial(direct_ttft, client, base_url, model, None)
            label = f"paced reference: first token after {PACED_FIRST_TOKEN_MS} ms"
            return await cloud_overhead(routes.engine(PACED_MODEL), direct, pairs, label)
        finally:
            await routes.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        import uvicorn

        uvicorn.run(paced_provider(), host="127.0.0.1", port=int(sys.argv[2]))


async def bench_generation(docent: Docent, requests: Sequence[GenerationRequest]) -> list[Measure]:
    config = docent.chat.config()
    engine = LocalEngine(config, docent.chat.safety)
    await engine.start()
    # The baseline: llama-cpp-python in this process, loaded as the engine's child loads it, and
    # called from one thread, as the child calls it: ggml's OpenMP teams are per calling thread,
    # and with more of them than cores libgomp stops spinning at ggml's barriers (hundreds per
    # token): through asyncio.to_thread's pool the baseline decoded at 18 tok/s instead of 30.
    llama_cpp = native.load()
    assert engine.state is not None
    native.use_extra_buffers(llama_cpp, engine.state.extra_buffers)
    llama_thread = SerialWorker("bench-llama")
    direct = await llama_thread.run(
        llama_cpp.Llama,
        model_path=str(config.path),
        n_ctx=config.n_ctx,
        n_threads=config.threads,
        n_threads_batch=config.threads,
        n_gpu_layers=config.n_gpu_layers,
        seed=config.seed,
        verbose=False,
    )
    ttft = Measure(
        "local TTFT (same prompt)",
        "s",
        baseline_name="llama-cpp-python direct",
        target="within 30 ms",
        compare="difference",
    )
    decode = Measure(
        "local decode", "tok/s", baseline_name="llama-cpp-python direct", target=">= 0.95"
    )
    prompt_tokens: list[float] = []
    try:
        for attempt, request in enumerate(requests):
            runs: list[Callable[[], Any]] = [
                partial(_time_docent, engine, request),
                partial(llama_thread.run, _time_direct, direct, request),
            ]
            if attempt % 2:
                runs.reverse()
            results = [await run() for run in runs]
            if attempt % 2:
                results.reverse()
            (ours_ttft, ours_rate, tokens), (direct_ttft, direct_rate) = results
            ttft.docent.append(ours_ttft)
            ttft.baseline.append(direct_ttft)
            decode.docent.append(ours_rate)
            decode.baseline.append(direct_rate)
            prompt_tokens.append(tokens)
    finally:
        await llama_thread.run(direct.close)
        llama_thread.shutdown()
        await engine.close()
    ttft.name += f", {statistics.median(prompt_tokens):.0f} prompt tokens"
    return [ttft, decode]


async def _time_docent(engine: LocalEngine, request: GenerationRequest) -> tuple[float, float, int]:
    sample = await one_request(engine, request)
    assert sample.decode_tok_s is not None, "the answer was too short to time decoding"
    return sample.ttft_s, sample.decode_tok_s, sample.prompt_tokens


def _time_direct(llama: Any, request: GenerationRequest) -> tuple[float, float]:
    started = time.perf_counter()
    times: list[float] = []
    for chunk in llama.create_chat_completion(
        messages=[{"role": m.role, "content": m.content} for m in request.messages],
        stream=True,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        top_k=40,
        top_p=0.95,
        repeat_penalty=1.1,
    ):
        if chunk["choices"][0]["delta"].get("content"):
            times.append(time.perf_counter())
    rate = (len(times) - 1) / max(times[-1] - times[0], 1e-9)
    return times[0] - started, rate


def bench_router(questions: Sequence[str], repeats: int) -> Measure:
    """The auto policy's decision on 20 retrieved passages (target: well under 10 ms)."""
    policy = AutoPolicy(
        RoutingSettings(),
        "local",
        lambda: [CloudModel("gw/model", "gw", True)],
        lambda: 1.0,
    )
    passages = [
        Passage(
            StoredChunk(n, n % 5, f"/d/{n % 5}.pdf", "t", n, 1, "1", None, "text"),
            1 / (60 + n),
            n + 1,
            n + 1,
            0.9 - n / 200,
        )
        for n in range(20)
    ]
    measure = Measure("router decision", "ms", target="< 10 ms", compare="none")
    for _ in range(repeats):
        started = time.perf_counter()
        for question in questions:
            policy.decide(question, passages)
        measure.docent.append((time.perf_counter() - started) * 1000 / len(questions))
    return measure
