"""What every `docent bench` suite shares: a measure (Docent's runs beside a baseline's, from
the same run), its Markdown table, the generated PDF corpus, and the local-engine timings.

Each measure runs Docent and the baseline alternately, several times, and reports medians with
their spread (min–max), because machines here are noisy: ratios, not absolute numbers, are the
targets.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

from app.bench_inference import one_request
from app.bootstrap import Docent
from app.index import Passage
from app.index.store import StoredChunk
from app.llm.engine import GenerationRequest
from app.llm.local import LocalEngine
from app.routing import AutoPolicy, CloudModel
from app.settings import RoutingSettings

_TOPICS = (
    ("Retention", "invoices", "records", "archives", "contracts", "ledgers"),
    ("Privacy", "personal data", "consent", "access requests", "encryption", "pseudonyms"),
    ("Security", "passwords", "audit logs", "backups", "incident reports", "firewalls"),
    ("Finance", "budgets", "forecasts", "expenses", "payroll", "procurement"),
)
_VERBS = ("are reviewed", "must be kept", "are deleted", "are encrypted", "are approved")
_WHEN = ("every quarter", "for seven years", "after 24 months", "within 30 days", "each January")


@dataclass(slots=True)
class Measure:
    name: str
    unit: str
    docent: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    baseline_name: str = ""
    target: str = ""
    compare: str = "ratio"  # ratio (docent / baseline), difference (docent - baseline), or none

    @property
    def docent_median(self) -> float:
        return statistics.median(self.docent)

    @property
    def baseline_median(self) -> float | None:
        return statistics.median(self.baseline) if self.baseline else None

    @property
    def comparison(self) -> float | None:
        base = self.baseline_median
        if base is None or self.compare == "none":
            return None
        if self.compare == "difference":
            # Runs are paired (same prompt, back to back): the median of the pairs' differences
            # resists this machine's noise far better than a difference of medians.
            return statistics.median(a - b for a, b in zip(self.docent, self.baseline, strict=True))
        return self.docent_median / base if base else None


def _number(value: float) -> str:
    """Three significant digits, without scientific notation for big values."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _spread(values: Sequence[float]) -> str:
    if len(values) < 2:
        return ""
    return f" ({_number(min(values))}–{_number(max(values))})"


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def write_corpus(folder: Path, documents: int, pages: int, seed: int = 7) -> list[Path]:
    """Report-like PDFs: a TOC section per page, printed page labels, paragraphs of prose."""
    rng = random.Random(seed)
    files = []
    for number in range(documents):
        doc = pymupdf.open()
        toc = []
        for page_number in range(1, pages + 1):
            topic, *subjects = rng.choice(_TOPICS)
            title = f"{page_number}. {topic} policy, part {rng.randint(1, 9)}"
            toc.append([1, title, page_number])
            page = doc.new_page()
            page.insert_text((56, 60), title, fontsize=15)
            paragraphs = []
            for _ in range(5):
                sentences = [
                    f"{rng.choice(subjects).capitalize()} of unit {rng.randint(1, 40)} "
                    f"{rng.choice(_VERBS)} {rng.choice(_WHEN)}, as the {topic.lower()} "
                    f"board decided in meeting {rng.randint(100, 999)}."
                    for _ in range(rng.randint(3, 5))
                ]
                paragraphs.append(" ".join(sentences))
            page.insert_textbox(pymupdf.Rect(56, 80, 540, 800), "\n\n".join(paragraphs), fontsize=9)
        doc.set_toc(toc)
        doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}])
        path = folder / f"report-{number + 1}.pdf"
        doc.save(path)
        doc.close()
        files.append(path)
    return files


def raw_extract(files: Sequence[Path]) -> int:
    """The baseline: PyMuPDF's own text extraction of every page."""
    pages = 0
    for path in files:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages


async def bench_generation(docent: Docent, requests: Sequence[GenerationRequest]) -> list[Measure]:
    from llama_cpp import Llama

    config = docent.chat_model()
    engine = LocalEngine(config)
    await engine.start()
    direct = await asyncio.to_thread(
        Llama,
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
                partial(asyncio.to_thread, _time_direct, direct, request),
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
        direct.close()
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


def render(measures: Sequence[Measure]) -> str:
    lines = [
        "| measure | Docent | baseline | comparison | target |",
        "|---|---|---|---|---|",
    ]
    for m in measures:
        base = m.baseline_median
        baseline = (
            "" if base is None else f"{_number(base)}{_spread(m.baseline)} ({m.baseline_name})"
        )
        comparison = ""
        if (value := m.comparison) is not None:
            comparison = f"{value * 1000:+.0f} ms" if m.compare == "difference" else f"{value:.2f}x"
        lines.append(
            f"| {m.name} | {_number(m.docent_median)}{_spread(m.docent)} {m.unit} | {baseline} | "
            f"{comparison} | {m.target} |"
        )
    return "\n".join(lines)


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
