"""What an answer cost: time to first token, total time, tokens, throughput and money."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from app.llm.engine import GenerationDone
from app.routing import Reason

if TYPE_CHECKING:
    from app.index import HistoryRecord

_NOT_RECORDED = "cached_tokens"  # the history has no column for it


@dataclass(frozen=True, slots=True)
class AnswerMetrics:
    route: str
    model: str
    reason: str
    retrieval_s: float  # question in -> sources chosen
    ttft_s: float | None  # question in -> first token (what the user waits for)
    total_s: float
    prompt_tokens: int
    completion_tokens: int
    tokens_per_s: float | None  # decode rate, first token to last
    cost_usd: float | None  # None: unknown (a cloud model without a price)
    cached_tokens: int = 0  # prompt tokens the local KV cache held from the previous request
    # `reason` as a code and values: a front end words it in its language, also when it shows
    # a recorded answer again (None: recorded before the history kept it).
    why: Reason | None = None

    @classmethod
    def measure(
        cls,
        *,
        route: str,
        model: str,
        reason: str,
        started_at: float,
        retrieved_at: float,
        finished_at: float,
        generation: GenerationDone | None,
        why: Reason | None = None,
    ) -> AnswerMetrics:
        first = generation.first_token_at if generation else None
        last = generation.last_token_at if generation else None
        completion = generation.completion_tokens if generation else 0
        rate = None
        if first is not None and last is not None and completion > 1 and last > first:
            rate = (completion - 1) / (last - first)
        return cls(
            route=route,
            model=model,
            reason=reason,
            retrieval_s=retrieved_at - started_at,
            ttft_s=None if first is None else first - started_at,
            total_s=finished_at - started_at,
            prompt_tokens=generation.prompt_tokens if generation else 0,
            completion_tokens=completion,
            tokens_per_s=rate,
            cost_usd=generation.cost_usd if generation else 0.0,
            cached_tokens=generation.cached_tokens if generation else 0,
            why=why,
        )

    def footer(self) -> str:
        """route: local (qwen2.5-coder-0.5b) · why: … · TTFT 0.41 s · total 2.3 s · …"""
        ttft = "–" if self.ttft_s is None else f"{self.ttft_s:.2f} s"
        rate = "–" if self.tokens_per_s is None else f"{self.tokens_per_s:.1f}"
        return (
            f"route: {self.route} ({self.model}) · why: {self.reason} · TTFT {ttft} · "
            f"total {self.total_s:.1f} s · {rate} tok/s · "
            f"{self.prompt_tokens}+{self.completion_tokens} tokens · {describe_cost(self.cost_usd)}"
        )

    def as_dict(self) -> dict[str, Any]:
        """The numbers and the reason's words (the CLI's and the MCP server's JSON)."""
        shown = asdict(self)
        del shown["why"]
        return shown

    def recorded(self) -> dict[str, Any]:
        """What the history keeps: the KV cache's share is for the badge and the benches."""
        kept = {name: value for name, value in asdict(self).items() if name != _NOT_RECORDED}
        return kept | {"why": None if self.why is None else self.why.as_dict()}

    @classmethod
    def from_record(cls, record: HistoryRecord) -> AnswerMetrics:
        """An answer's metrics from its history record (what `recorded` kept)."""
        kept = (f.name for f in fields(cls) if f.name not in (_NOT_RECORDED, "why"))
        why = None if record.why is None else Reason.from_dict(record.why)
        return cls(**{name: getattr(record, name) for name in kept}, why=why)


def describe_cost(cost_usd: float | None) -> str:
    return "cost unknown" if cost_usd is None else f"${cost_usd:.4f}"
