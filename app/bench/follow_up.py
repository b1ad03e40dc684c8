"""A follow-up's TTFT against a cold question's, on the same final prompt (`docent bench overhead`).

A conversation's follow-up sends the earlier turns verbatim (answering/conversation.py), so its
prompt extends the previous request's prompt and answer, and the local engine evaluates only the
new part. The cold run sends the very same prompt after an unrelated request has taken the KV
cache (all it shares is the system prompt, as any new question does). Target: <= 0.5.
"""

from __future__ import annotations

import time

from app.bench.common import Measure, filler
from app.bootstrap import Docent
from app.llm.engine import CancelToken, GenerationRequest, Message, TokenGenerated
from app.llm.local import LocalEngine

FIRST_PROMPT_TOKENS = 512  # the first turn's sources (the default context budget is larger)
NEW_SOURCE_TOKENS = 64  # a passage the follow-up adds
ANSWER_TOKENS = 48


async def bench_follow_up(docent: Docent, count: int) -> Measure:
    engine = LocalEngine(docent.chat.config(), docent.chat.safety)
    await engine.start()
    measure = Measure(
        f"local follow-up TTFT (turn 1: {FIRST_PROMPT_TOKENS}-token sources)",
        "s",
        baseline_name="the same prompt, cold",
        target="<= 0.2",
    )
    try:
        await _answer(engine, filler(64, 900, 4))  # warm-up: the model's first run is slower
        for variant in range(1, count + 1):
            first = filler(FIRST_PROMPT_TOKENS, variant, ANSWER_TOKENS)
            answer, _ = await _answer(engine, first)
            # The follow-up's user message: one new passage (filler's sources, its question cut).
            sources = filler(NEW_SOURCE_TOKENS, variant + 500, 0).messages[-1].content
            sources = sources.rsplit("\n\n", 1)[0]
            follow_up = GenerationRequest(
                [
                    *first.messages,
                    Message("assistant", answer),
                    Message("user", f"{sources}\n\nQuestion: Why?"),
                ],
                max_tokens=4,
                temperature=0.0,
            )
            _, warm = await _answer(engine, follow_up)
            await _answer(engine, filler(FIRST_PROMPT_TOKENS, variant + 1000, 4))  # evicts it
            _, cold = await _answer(engine, follow_up)
            measure.docent.append(warm)
            measure.baseline.append(cold)
    finally:
        await engine.close()
    return measure


async def _answer(engine: LocalEngine, request: GenerationRequest) -> tuple[str, float]:
    """The text the model wrote, and its time to first token."""
    started = time.perf_counter()
    first: float | None = None
    pieces: list[str] = []
    async for event in engine.stream(request, CancelToken()):
        if isinstance(event, TokenGenerated):
            first = first or time.perf_counter()
            pieces.append(event.text)
    return "".join(pieces).strip(), (first or time.perf_counter()) - started
