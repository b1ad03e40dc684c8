"""Which route answers a question, and why: a policy returns route + model + a one-line reason.

The auto policy reads the question (length, parts, comparison / why / compute cues, language),
how confident retrieval is (top similarity, its margin over the next passage, how many documents
the evidence spans), the privacy rule, the remaining monthly budget and cloud health. It is
plain arithmetic on data already in memory: well under a millisecond per decision (`docent bench`
measures it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from app.cjk import estimate_tokens
from app.errors import DocentError
from app.index import Passage
from app.settings import RoutingSettings

Route = Literal["local", "cloud", "cache", "fallback"]


@dataclass(frozen=True, slots=True)
class RouteDecision:
    route: Route
    model: str
    reason: str


class RouteUnavailable(DocentError):
    """The user asked for a route that cannot answer now (none configured, or it is down)."""


class RoutePolicy(Protocol):
    def decide(
        self, question: str, passages: Sequence[Passage], requested: Route | None = None
    ) -> RouteDecision:
        """Cheap (well under 10 ms) and explainable: the reason is shown to the user.

        `requested` is the user's explicit choice ("re-ask with the other route"); a policy
        honours it or raises RouteUnavailable saying why it cannot.
        """
        ...

    def escalation(self, question: str, why: str) -> RouteDecision | None:
        """Cascade: where a local draft that failed its check goes (None: nowhere)."""
        ...

    def rescue(
        self, question: str, why: str, requested: Route | None = None
    ) -> RouteDecision | None:
        """The local model crashed answering (`why`): the `fallback` that retries the question
        in the cloud, where the user allows the cloud; None: nowhere."""
        ...


NO_CLOUD = "no cloud route is configured: add a provider or an MCP server in Settings → Cloud"


@dataclass(frozen=True, slots=True)
class LocalOnlyPolicy:
    model: str

    def decide(
        self, question: str, passages: Sequence[Passage], requested: Route | None = None
    ) -> RouteDecision:
        if requested == "cloud":
            raise RouteUnavailable(NO_CLOUD)
        if requested == "local":
            return RouteDecision("local", self.model, "you asked for the local model")
        return RouteDecision("local", self.model, "local only: no cloud route is configured")

    def escalation(self, question: str, why: str) -> RouteDecision | None:
        return None

    def rescue(
        self, question: str, why: str, requested: Route | None = None
    ) -> RouteDecision | None:
        return None


# --- what the question says about itself --------------------------------------------------

_CUES: dict[str, re.Pattern[str]] = {
    "comparison": re.compile(
        r"\b(compare|comparison|differ(ence|ent)?|versus|vs\.?|contrast|better|worse)\b"
        r"|比较|区别|不同|相比|对比",
        re.IGNORECASE,
    ),
    "explanation": re.compile(
        r"\b(why|explain|reason|cause|implications?|consequences?|justify)\b|为什么|原因|解释",
        re.IGNORECASE,
    ),
    "computation": re.compile(
        r"\b(calculate|compute|how many|how much|total|sum|average|percent(age)?|ratio)\b"
        r"|\d+\s*[-+*/×÷^%]\s*\d+|计算|多少|总共|平均|百分之",
        re.IGNORECASE,
    ),
    "code": re.compile(
        r"```|\b(function|python|javascript|sql|regex|stack ?trace|compile|bug|code)\b",
        re.IGNORECASE,
    ),
}
_PART_SEPARATORS = re.compile(
    r"[?？]\s*\S|;\s|；|\band (who|what|when|where|why|how|which)\b|以及|并且", re.IGNORECASE
)
_HAN = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True, slots=True)
class QuestionFeatures:
    tokens: int
    parts: int
    cues: frozenset[str]
    language: str  # "zh" when mostly Han characters, else "other"

    @classmethod
    def read(cls, question: str) -> QuestionFeatures:
        han = len(_HAN.findall(question))
        letters = sum(ch.isalpha() for ch in question) or 1
        return cls(
            tokens=estimate_tokens(question),
            parts=1 + len(_PART_SEPARATORS.findall(question.strip())),
            cues=frozenset(name for name, pattern in _CUES.items() if pattern.search(question)),
            language="zh" if han / letters > 0.3 else "other",
        )

    @property
    def topic(self) -> str | None:
        for topic, cue in (("code", "code"), ("math", "computation")):
            if cue in self.cues:
                return topic
        return None


@dataclass(frozen=True, slots=True)
class RetrievalConfidence:
    top_similarity: float | None  # cosine of the best passage (None: keyword-only index)
    margin: float | None  # best minus second best similarity
    agreement: bool  # the best passage is in both the keyword and the vector lists
    documents: int  # how many documents the retrieved evidence spans

    @classmethod
    def read(cls, passages: Sequence[Passage]) -> RetrievalConfidence:
        similarities = sorted(
            (p.similarity for p in passages if p.similarity is not None), reverse=True
        )
        best = passages[0] if passages else None
        return cls(
            top_similarity=similarities[0] if similarities else None,
            margin=similarities[0] - similarities[1] if len(similarities) > 1 else None,
            agreement=bool(best and best.keyword_rank and best.vector_rank),
            documents=len({p.chunk.document_id for p in passages}),
        )


COMPUTATION = "needs a computation"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a question counts as hard for the local model. The defaults are the ones `docent
    eval` fitted on the manuals set's tune split (bundled 0.5B model, 2026-12-04): one reason
    is enough, since a question with any of them was answered wrong locally more often than
    not, and a weak best match never separated right answers from wrong ones there (0 turns
    that reason off; multilingual-e5 cosines of a relevant passage sit around 0.85-0.9). On the
    held-out split this keeps 4 wrong answers local instead of 9."""

    weak_similarity: float = 0.0
    ambiguous_margin: float = 0.005
    long_question_tokens: int = 60
    escalate_at: int = 1  # hardness points
    computation_alone: bool = False  # a computation escalates without a second reason

    def escalates(self, reasons: Sequence[str]) -> bool:
        if self.computation_alone and COMPUTATION in reasons:
            return True
        return len(reasons) >= self.escalate_at


def hardness(
    question: QuestionFeatures, evidence: RetrievalConfidence, thresholds: Thresholds = Thresholds()
) -> list[str]:
    """Why a question is hard for a small local model, most telling reasons first."""
    reasons: list[str] = []
    if question.parts > 1:
        reasons.append(f"{question.parts}-part question")
    reasons += [
        {
            "comparison": "asks for a comparison",
            "explanation": "asks why / for an explanation",
            "computation": COMPUTATION,
            "code": "is about code",
        }[cue]
        for cue in sorted(question.cues)
    ]
    if question.tokens > thresholds.long_question_tokens:
        reasons.append(f"long question ({question.tokens} tokens)")
    similarity, margin = evidence.top_similarity, evidence.margin
    if similarity is not None and similarity < thresholds.weak_similarity:
        reasons.append(f"weak evidence (best match {similarity:.2f})")
    elif margin is not None and margin < thresholds.ambiguous_margin:
        reasons.append("ambiguous evidence (top passages tie)")
    if evidence.documents >= 3:
        reasons.append(f"evidence spans {evidence.documents} documents")
    return reasons


@dataclass(frozen=True, slots=True)
class CloudModel:
    model: str  # as the server's tool expects it, e.g. "openrouter/openai/gpt-4o-mini"
    server: str
    healthy: bool
    detail: str = ""  # why not, when it is not healthy


@dataclass
class AutoPolicy:
    """The router: local unless the question looks hard and the cloud is allowed, up and paid.

    `cloud` and `budget_left_usd` are read at every decision, so health and spending are live.
    """

    settings: RoutingSettings
    local_model: str
    cloud: Callable[[], Sequence[CloudModel]]
    budget_left_usd: Callable[[], float]
    thresholds: Thresholds = Thresholds()

    def decide(
        self, question: str, passages: Sequence[Passage], requested: Route | None = None
    ) -> RouteDecision:
        features = QuestionFeatures.read(question)
        if requested == "local" or (requested is None and self.settings.mode == "local"):
            why = "you asked for the local model" if requested else "routing mode: local only"
            return self._local(why)
        if requested == "cloud" and (refused := self.cloud_unavailable()):
            raise RouteUnavailable(refused)
        if self.settings.privacy == "never":
            return self._local("privacy: nothing leaves this machine")
        models = list(self.cloud())
        if not models:
            return self._local("local only: no cloud route is configured")
        chosen = self._cloud_model(features, models)
        forced = requested == "cloud" or self.settings.mode == "cloud"
        if chosen is None:
            return self._local(f"cloud unavailable ({_down(models)})")
        if self.budget_left_usd() <= 0:
            return self._local(_budget_spent(self.settings.monthly_budget_usd))
        if forced:
            why = "you asked for the cloud" if requested else "routing mode: cloud only"
            return RouteDecision("cloud", chosen.model, why)
        reasons = hardness(features, RetrievalConfidence.read(passages), self.thresholds)
        if self.thresholds.escalates(reasons):
            return RouteDecision("cloud", chosen.model, "; ".join(reasons[:3]))
        evidence = "; ".join(reasons) or "strong evidence"
        return self._local(f"simple question ({evidence})")

    def cloud_unavailable(self) -> str | None:
        """Why no question can go to the cloud now (None: one can): what a request for the
        cloud is refused with, and what the window says beside its "Cloud only" choice."""
        if self.settings.privacy == "never":
            return "privacy is set to never send anything to the cloud"
        models = list(self.cloud())
        if not models:
            return NO_CLOUD
        if not any(model.healthy for model in models):
            return f"every cloud route is down ({_down(models)})"
        if self.budget_left_usd() <= 0:
            return _budget_spent(self.settings.monthly_budget_usd)
        return None

    def escalation(self, question: str, why: str) -> RouteDecision | None:
        """Only with the cascade on, the cloud allowed, up and within budget."""
        if not self.settings.cascade or self.settings.privacy == "never":
            return None
        if self.budget_left_usd() <= 0:
            return None
        chosen = self._cloud_model(QuestionFeatures.read(question), list(self.cloud()))
        if chosen is None:
            return None
        return RouteDecision("cloud", chosen.model, f"cascade: the local draft {why}")

    def rescue(
        self, question: str, why: str, requested: Route | None = None
    ) -> RouteDecision | None:
        """Not when the user asked for the local model or for nothing to leave this machine;
        otherwise wherever the cloud is up and paid for."""
        local_only = requested == "local" or (requested is None and self.settings.mode == "local")
        if local_only or self.settings.privacy == "never" or self.budget_left_usd() <= 0:
            return None
        chosen = self._cloud_model(QuestionFeatures.read(question), list(self.cloud()))
        if chosen is None:
            return None
        return RouteDecision("fallback", chosen.model, f"{why}; the cloud answered instead")

    def _local(self, reason: str) -> RouteDecision:
        return RouteDecision("local", self.local_model, reason)

    def _cloud_model(
        self, features: QuestionFeatures, models: Sequence[CloudModel]
    ) -> CloudModel | None:
        healthy = [m for m in models if m.healthy]
        topic_model = self.settings.topic_models.get(features.topic or "")
        for model in healthy:
            if topic_model and model.model == topic_model:
                return model
        return healthy[0] if healthy else None


def _down(models: Sequence[CloudModel]) -> str:
    return "; ".join(f"{m.server}: {m.detail or 'down'}" for m in models)


def _budget_spent(budget_usd: float) -> str:
    return f"this month's cloud budget (${budget_usd:.2f}) is spent"
