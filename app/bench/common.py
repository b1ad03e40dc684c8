"""What every `docent bench` suite shares: a measure (Docent's runs beside a baseline's, from
the same run), its Markdown table, the generated PDF corpus, the document-QA prompt filler and
the timing of one request.

Each measure runs Docent and the baseline alternately, several times, and reports medians with
their spread (min–max), because machines here are noisy: ratios, not absolute numbers, are the
targets.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pymupdf

from app.llm.engine import (
    CancelToken,
    ChatEngine,
    GenerationDone,
    GenerationRequest,
    Message,
    TokenGenerated,
)

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


def policy_topic(rng: random.Random) -> tuple[str, list[str]]:
    """A policy's topic and the subjects it rules on."""
    topic, *subjects = rng.choice(_TOPICS)
    return topic, subjects


def policy_paragraph(rng: random.Random, topic: str, subjects: Sequence[str]) -> str:
    """A paragraph of report-like prose: 3 to 5 sentences of rules."""
    return " ".join(
        f"{rng.choice(subjects).capitalize()} of unit {rng.randint(1, 40)} "
        f"{rng.choice(_VERBS)} {rng.choice(_WHEN)}, as the {topic.lower()} "
        f"board decided in meeting {rng.randint(100, 999)}."
        for _ in range(rng.randint(3, 5))
    )


def write_corpus(folder: Path, documents: int, pages: int, seed: int = 7) -> list[Path]:
    """Report-like PDFs: a TOC section per page, printed page labels, paragraphs of prose."""
    rng = random.Random(seed)
    files = []
    for number in range(documents):
        doc = pymupdf.open()
        toc = []
        for page_number in range(1, pages + 1):
            topic, subjects = policy_topic(rng)
            title = f"{page_number}. {topic} policy, part {rng.randint(1, 9)}"
            toc.append([1, title, page_number])
            page = doc.new_page()
            page.insert_text((56, 60), title, fontsize=15)
            paragraphs = [policy_paragraph(rng, topic, subjects) for _ in range(5)]
            page.insert_textbox(pymupdf.Rect(56, 80, 540, 800), "\n\n".join(paragraphs), fontsize=9)
        doc.set_toc(toc)
        doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}])
        path = folder / f"report-{number + 1}.pdf"
        doc.save(path)
        doc.close()
        files.append(path)
    return files


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


_SENTENCES = (
    "Customer invoices are retained for seven years after the end of the financial year.",
    "Payroll records are kept for four years after the employee leaves the company.",
    "Security logs are kept for ninety days, or one year when they relate to an incident.",
    "Contracts are kept for six years after they expire, then reviewed for deletion.",
    "The compliance team reviews the retention schedule every year and after law changes.",
)


def filler(
    tokens: int,
    variant: int,
    max_tokens: int,
    system: str = "Answer from the sources in one short sentence.",
    ask: str = "Question: How long are invoices kept?",
) -> GenerationRequest:
    """A document-QA prompt of about `tokens` tokens (about 17 tokens a sentence).

    Each variant differs from its first user token on, so no request reuses another's KV cache
    beyond the shared system prompt (as with real, different questions).
    """
    count = max(1, tokens // 17)
    text = " ".join(_SENTENCES[(i + variant) % len(_SENTENCES)] for i in range(count))
    return GenerationRequest(
        [
            Message("system", system),
            Message("user", f"Case {variant}. Sources:\n{text}\n\n{ask}"),
        ],
        max_tokens=max_tokens,
        temperature=0.0,
    )


@dataclass(frozen=True, slots=True)
class Sample:
    ttft_s: float
    total_s: float
    prompt_tokens: int
    completion_tokens: int

    @property
    def decode_tok_s(self) -> float | None:
        decoding = self.total_s - self.ttft_s
        if self.completion_tokens < 2 or decoding <= 0:
            return None
        return (self.completion_tokens - 1) / decoding


async def one_request(engine: ChatEngine, request: GenerationRequest) -> Sample:
    started = time.perf_counter()
    first: float | None = None
    done: GenerationDone | None = None
    async for event in engine.stream(request, CancelToken()):
        if isinstance(event, TokenGenerated) and first is None:
            first = time.perf_counter()
        elif isinstance(event, GenerationDone):
            done = event
    finished = time.perf_counter()
    assert done is not None, "the engine ended without GenerationDone"
    return Sample(
        ttft_s=(first or finished) - started,
        total_s=finished - started,
        prompt_tokens=done.prompt_tokens,
        completion_tokens=done.completion_tokens,
    )
