"""How fast this computer runs the local models, and which one Docent answers with by default.

At first run (and when asked, in Settings) Docent times the bundled chat model on a short
grounded prompt: a few seconds. From that, and from the catalog's reference speeds of each model
on one reference machine, it predicts what a larger catalog model would do here on a typical
question, and chooses the largest one that meets the targets below. The speed ratio of two models
of one family and quantisation holds roughly from CPU to CPU (both scale with the same compute and
memory bandwidth); absolute rates do not, which is why the bundled model is measured here. A check
on a busy machine measures low and keeps the bundled model: it errs towards the faster answer.
"""

from __future__ import annotations

import asyncio
import datetime
import time
from dataclasses import dataclass, replace
from pathlib import Path

from app.catalog import Catalog, CatalogModel, ModelError, Speed
from app.llm.chat_model import chat_model_config
from app.llm.engine import (
    CancelToken,
    EngineError,
    GenerationDone,
    GenerationRequest,
    Message,
)
from app.llm.local import LocalEngine, LocalModelConfig
from app.llm.safety import SafetyMemory
from app.settings import Settings, SpeedCheck

# A larger model is chosen only if it starts answering a typical question within 6 s: about the
# bundled 0.5B model's own median TTFT on the held-out evaluation on the 2-core reference laptop
# (5.6 s), the wait Docent was designed around. Better answers (1.5B: 64 % vs 48 % held out)
# are worth that wait, not more: the 1.5B takes 10.5 s there, past the ~10 s a person keeps
# attention on a response.
TTFT_TARGET_S = 6.0
# And it must write faster than people read (about 250 words a minute, ~6 tokens/s), with room
# for the machine being busy: the answer streams ahead of the reader instead of making them wait.
DECODE_TARGET_TOK_S = 8.0
# A larger model is *recommended* in Models… (the user decides) on a looser bound. On the 2-core
# reference laptop, on a fresh evaluation set, the 1.5B answered 27 of 40 questions right against
# the 0.5B's 21 and showed fewer wrong answers (8 vs 11), for a median TTFT of 6.35 s vs 3.9 s: a
# trade worth offering there. The check predicts 15.7 s there for a question that fills the source
# budget (most fill less), so the bound takes that in, with room for a check that measured the
# machine up to a fifth slow; a computer half as fast (31 s) is not offered it.
RECOMMEND_TTFT_S = 20.0
# A typical prompt (~1,200 tokens) is read at ~85 % of the probe's rate, as attention grows with
# the prompt (bench inference, reference machine: 0.5B 171 -> 145, 1.5B 90 -> 77 tok/s).
LONG_PROMPT_RATE = 0.85

_PASSAGE = (
    "Source {n} (Records policy, page {n}): Customer invoices are kept for seven years after "
    "the end of the financial year in which they were issued. Payroll records are kept for "
    "four years after an employee leaves. Security logs are kept for ninety days, or for one "
    "year when they relate to an incident under review. Signed contracts are kept for six "
    "years after they expire and are then reviewed for deletion by the records office."
)
_PROBE = GenerationRequest(
    [
        Message("system", "Answer from the sources only, and cite them as [n]."),
        Message(
            "user",
            "\n\n".join(_PASSAGE.format(n=n) for n in range(1, 6))
            + "\n\nQuestion: List every retention period in the sources, one per line.",
        ),
    ],
    max_tokens=24,  # enough tokens to time decoding, few enough to stay within seconds
    temperature=0.0,
)


async def measure(config: LocalModelConfig, safety: SafetyMemory | None = None) -> Speed:
    """Time `config`'s model on the probe (~470 prompt tokens, 24 answer tokens), in an engine
    of its own (with the safe settings a crash chose here): the model answering questions is
    neither needed nor disturbed."""
    cancel = CancelToken()
    engine = LocalEngine(replace(config, n_ctx=1024), safety)
    timing = asyncio.ensure_future(_run_probe(engine, cancel))
    try:
        # Shielded, so that a cancelled check (the window closing) stops the model within one
        # prompt slice instead of waiting for its first token.
        started, done = await asyncio.shield(timing)
    except asyncio.CancelledError:
        cancel.cancel()
        await asyncio.gather(timing, return_exceptions=True)
        raise
    if done is None or done.first_token_at is None or done.last_token_at is None:
        raise EngineError("the speed check got no answer to time")
    if done.completion_tokens < 4:
        raise EngineError(f"the speed check's answer stopped after {done.completion_tokens} tokens")
    return Speed(
        prefill_tok_s=done.prompt_tokens / (done.first_token_at - started),
        decode_tok_s=(done.completion_tokens - 1) / (done.last_token_at - done.first_token_at),
    )


async def _run_probe(
    engine: LocalEngine, cancel: CancelToken
) -> tuple[float, GenerationDone | None]:
    """When the probe was sent (after the model loaded), and how its generation ended."""
    done: GenerationDone | None = None
    try:
        await engine.start()
        started = time.perf_counter()
        async for event in engine.stream(_PROBE, cancel):
            if isinstance(event, GenerationDone):
                done = event
    finally:
        await engine.close()
    return started, done


def predict(measured: CatalogModel, speed: Speed, other: CatalogModel) -> Speed:
    """`other`'s speed here, from `measured`'s speed here and the two reference speeds."""
    if measured.reference_speed is None or other.reference_speed is None:
        raise ModelError(f"the catalog has no reference speed for {measured.name} or {other.name}")
    reference, theirs = measured.reference_speed, other.reference_speed
    return Speed(
        prefill_tok_s=speed.prefill_tok_s * theirs.prefill_tok_s / reference.prefill_tok_s,
        decode_tok_s=speed.decode_tok_s * theirs.decode_tok_s / reference.decode_tok_s,
    )


def ttft_s(speed: Speed, prompt_tokens: int) -> float:
    """Time to first token on a prompt of typical length (prefill dominates it on a CPU)."""
    return prompt_tokens / (speed.prefill_tok_s * LONG_PROMPT_RATE)


def decide(catalog: Catalog, speed: Speed, prompt_tokens: int, chat_model: str) -> SpeedCheck:
    """From the bundled chat model's `speed` here: the largest catalog chat model that starts
    answering a typical question (`prompt_tokens`) within TTFT_TARGET_S and writes at least
    DECODE_TARGET_TOK_S, else the bundled one. A switch is pending only while `chat_model`, the
    model in use, is the bundled one: a model the user chose is never replaced."""
    bundled = catalog.default("chat")
    larger = sorted(
        (
            model
            for model in catalog.models
            if model.role == "chat" and model.reference_speed and model.size > bundled.size
        ),
        key=lambda model: model.size,
    )
    if not larger:
        raise ModelError(f"the catalog names no chat model larger than {bundled.name} to compare")
    chosen, candidate, predicted = bundled, larger[0], predict(bundled, speed, larger[0])
    for model in larger:
        theirs = predict(bundled, speed, model)
        if (
            ttft_s(theirs, prompt_tokens) <= TTFT_TARGET_S
            and theirs.decode_tok_s >= DECODE_TARGET_TOK_S
        ):
            chosen, candidate, predicted = model, model, theirs
    return SpeedCheck(
        measured_on=datetime.date.today(),
        model=bundled.name,
        prefill_tok_s=speed.prefill_tok_s,
        decode_tok_s=speed.decode_tok_s,
        candidate=candidate.name,
        prompt_tokens=prompt_tokens,
        predicted_ttft_s=ttft_s(predicted, prompt_tokens),
        predicted_decode_tok_s=predicted.decode_tok_s,
        chosen=chosen.name,
        pending=chosen is not bundled and chat_model == bundled.name,
    )


async def check_speed(
    catalog: Catalog, models_dir: Path, settings: Settings, safety: SafetyMemory | None = None
) -> SpeedCheck:
    """Time the bundled chat model with the user's thread and GPU settings, and decide."""
    bundled = settings.local.model_copy(update={"chat_model": catalog.default("chat").name})
    # Joining the bundled model's parts on first use takes seconds: off the loop.
    config = await asyncio.to_thread(chat_model_config, bundled, catalog, models_dir)
    speed = await measure(config, safety)
    return decide(catalog, speed, settings.retrieval.context_tokens, settings.local.chat_model)


def switch_due(check: SpeedCheck, chat_model: str) -> bool:
    """Switch to the chosen model now? Only while the bundled model it was measured on is in use
    (a model chosen since, even in the settings file by hand, wins)."""
    return check.pending and chat_model == check.model


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A catalog chat model that answers more questions right than the one in use and is quick
    enough on this computer to offer; the speeds are predicted from the last speed check."""

    model: CatalogModel
    right: float
    right_now: float  # the model in use, on the same questions
    ttft_s: float  # for a question that fills the source budget
    decode_tok_s: float


def _find(catalog: Catalog, name: str) -> CatalogModel | None:
    return next((model for model in catalog.models if model.name == name), None)


def predicted_here(check: SpeedCheck, catalog: Catalog, model: CatalogModel) -> Speed | None:
    """`model`'s speed on this computer from the last speed check (None when the catalog holds no
    reference speed for it, or no longer knows the model measured)."""
    measured = _find(catalog, check.model)
    if measured is None or measured.reference_speed is None or model.reference_speed is None:
        return None
    return predict(measured, Speed(check.prefill_tok_s, check.decode_tok_s), model)


def recommend(check: SpeedCheck, catalog: Catalog, chat_model: str) -> Recommendation | None:
    """The most accurate catalog chat model, installed or downloadable, that answered more of the
    same evaluation's questions right than `chat_model` and that this computer runs within
    RECOMMEND_TTFT_S and DECODE_TARGET_TOK_S. None for the user's own GGUF (nothing to compare)."""
    current = _find(catalog, chat_model)
    if current is None or current.evaluation is None:
        return None
    offers: list[Recommendation] = []
    for model in catalog.models:
        evaluation = model.evaluation
        if (
            model.role != "chat"
            or evaluation is None
            or evaluation.questions != current.evaluation.questions
            or evaluation.right <= current.evaluation.right
            or not (model.installed or model.downloadable)
            or (speed := predicted_here(check, catalog, model)) is None
        ):
            continue
        ttft = ttft_s(speed, check.prompt_tokens)
        if ttft <= RECOMMEND_TTFT_S and speed.decode_tok_s >= DECODE_TARGET_TOK_S:
            offers.append(
                Recommendation(
                    model, evaluation.right, current.evaluation.right, ttft, speed.decode_tok_s
                )
            )
    return max(offers, key=lambda offer: offer.right, default=None)


def _short(catalog: Catalog, name: str) -> str:
    model = _find(catalog, name)
    return model.short_title if model else Path(name).stem  # else the user's own GGUF file


def describe(check: SpeedCheck, catalog: Catalog, chat_model: str) -> str:
    """What was measured, what was chosen and why, and where the switch stands (plain text)."""
    measured, candidate = _short(catalog, check.model), _short(catalog, check.candidate)
    text = (
        f"On {check.measured_on:%Y-%m-%d} this computer ran {measured} at "
        f"{check.prefill_tok_s:.0f} tokens/s reading a prompt and {check.decode_tok_s:.1f} "
        f"tokens/s writing. {candidate} would take about {check.predicted_ttft_s:.1f} s to start "
        f"answering a typical question ({check.prompt_tokens:,} tokens of sources) and write "
        f"{check.predicted_decode_tok_s:.1f} tokens/s. Docent's targets are at most "
        f"{TTFT_TARGET_S:g} s and at least {DECODE_TARGET_TOK_S:g} tokens/s, "
    )
    chosen = catalog.get(check.chosen)
    if chat_model == check.chosen == check.model:
        return text + f"so Docent keeps {measured}, which starts answering sooner here."
    if chat_model == check.chosen:
        return text + f"so Docent answers with {candidate}, which answers better."
    if switch_due(check, chat_model) and chosen.installed:
        return text + (
            f"so Docent switches to {candidate}, which answers better, once it is prepared; "
            f"{measured} answers until then."
        )
    if switch_due(check, chat_model):
        return text + (
            f"so Docent switches to {candidate}, which answers better, once it is installed: "
            f"pip install 'docent[{chosen.extra}]' ({chosen.size / 1e9:.1f} GB). {measured} "
            "answers until then."
        )
    return text + (
        f"so {_short(catalog, check.chosen)} suits this computer best; Docent keeps "
        f"{_short(catalog, chat_model)}, the model chosen before (Models… switches)."
    )
