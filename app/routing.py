"""Which route answers a question, and why: a policy returns route + model + a one-line reason.

The auto policy reads the question (length, parts, comparison / why / compute cues, language),
how confident retrieval is (top similarity, its margin over the next passage, how many documents
the evidence spans), the privacy rule, the remaining monthly budget and cloud health. It is
plain arithmetic on data already in memory: well under a millisecond per decision (`docent bench`
measures it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from app.cjk import estimate_tokens
from app.errors import DocentError
from app.index import Passage
from app.settings import RoutingSettings

Route = Literal["local", "cloud", "cache", "fallback"]


# Each reason's English, as the CLI, the history and MCP clients read it; a front end words the
# same codes in its own language (the window: ui/route_words.py).
ENGLISH: dict[str, str] = {
    "asked_local": "you asked for the local model",
    "asked_cloud": "you asked for the cloud",
    "mode_local": "routing mode: local only",
    "mode_cloud": "routing mode: cloud only",
    "no_cloud": "local only: no cloud route is configured",
    "no_cloud_hard": "local only: no cloud route is configured, though it looked hard ({parts})",
    "privacy": "privacy: nothing leaves this machine",
    # The same three where the local route runs on the user's model server: the question goes
    # there, so "nothing leaves this machine" would be false.
    "asked_server": "you asked for your model server",
    "mode_server": "routing mode: local only (your model server)",
    "privacy_server": "privacy: kept on your model server (no cloud)",
    "cloud_down": "cloud unavailable ({down})",
    "budget_spent": "this month's cloud budget (${budget_usd:.2f}) is spent",
    "hard": "{parts}",
    "simple": "simple question ({parts})",
    "strong_evidence": "strong evidence",
    "cascade": "cascade: the local draft {parts}",
    "draft_empty": "was empty",
    "draft_ungrounded": "was {grounded:.0%} grounded in the sources (below {floor:.0%})",
    "rescue": "{error}; the cloud answered instead",
    "cloud_failed": "cloud failed before its first token ({error}); answered locally",
    "server_failed": (
        "the model server failed before its first token ({error}); answered on this computer"
    ),
    "cached": "asked {age_s:.0f} s ago; cached for {ttl_s:g} s",
    "summary_local": "summaries are written locally unless you pick a cloud model",
    "summary_server": "summaries are written on your model server unless you pick a cloud model",
    "summary_stored": "stored when it was made; made again if the document changes",
    # Why no question can go to the cloud now (what a request for it is refused with).
    "privacy_refuses": "privacy is set to never send anything to the cloud",
    "no_cloud_set_up": (
        "no cloud route is configured: add a provider or an MCP server in Settings → Cloud"
    ),
    "all_down": "every cloud route is down ({down})",
    # What makes a question hard for a small local model (the parts of "hard" and "simple").
    "parts": "{count}-part question",
    "comparison": "asks for a comparison",
    "explanation": "asks why / for an explanation",
    "computation": "needs a computation",
    "code": "is about code",
    "long": "long question ({tokens} tokens)",
    "weak": "weak evidence (best match {similarity:.2f})",
    "ambiguous": "ambiguous evidence (top passages tie)",
    "spread": "evidence spans {documents} documents",
}


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a route answers, as a code (a key of ENGLISH) and its values, so each front end
    words it in its user's language; `parts` are the reasons a reason is made of (a hard
    question's, a failed draft's)."""

    code: str
    values: Mapping[str, str | int | float] = field(default_factory=dict)
    parts: tuple[Reason, ...] = ()

    @property
    def text(self) -> str:
        """In English, one line: parts joined by "; "."""
        parts = "; ".join(part.text for part in self.parts)
        return ENGLISH[self.code].format(**self.values, parts=parts)

    def as_dict(self) -> dict[str, Any]:
        """As the history keeps it (JSON), for a front end to word again later."""
        return {
            "code": self.code,
            "values": dict(self.values),
            "parts": [part.as_dict() for part in self.parts],
        }

    @classmethod
    def from_dict(cls, kept: Mapping[str, Any]) -> Reason:
        parts = tuple(cls.from_dict(part) for part in kept.get("parts", ()))
        return cls(str(kept["code"]), dict(kept.get("values", {})), parts)


@dataclass(frozen=True, slots=True)
class RouteDecision:
    route: Route
    model: str
    why: Reason

    @property
    def reason(self) -> str:
        return self.why.text


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

    def escalation(self, question: str, why: Reason) -> RouteDecision | None:
        """Cascade: where a local draft that failed its check (`why`) goes (None: nowhere)."""
        ...

    def rescue(
        self, question: str, why: str, requested: Route | None = None
    ) -> RouteDecision | None:
        """The local model crashed answering (`why`): the `fallback` that retries the question
        in the cloud, where the user allows the cloud; None: nowhere."""
        ...


NO_CLOUD = ENGLISH["no_cloud_set_up"]


@dataclass(frozen=True, slots=True)
class LocalOnlyPolicy:
    model: str

    def decide(
        self, question: str, passages: Sequence[Passage], requested: Route | None = None
    ) -> RouteDecision:
        if requested == "cloud":
            raise RouteUnavailable(NO_CLOUD)
        if requested == "local":
            return RouteDecision("local", self.model, Reason("asked_local"))
        return RouteDecision("local", self.model, Reason("no_cloud"))

    def escalation(self, question: str, why: Reason) -> RouteDecision | None:
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

    def escalates(self, reasons: Sequence[Reason]) -> bool:
        if self.computation_alone and any(reason.code == "computation" for reason in reasons):
            return True
        return len(reasons) >= self.escalate_at


def hardness(
    question: QuestionFeatures, evidence: RetrievalConfidence, thresholds: Thresholds = Thresholds()
) -> list[Reason]:
    """Why a question is hard for a small local model, most telling reasons first."""
    reasons: list[Reason] = []
    if question.parts > 1:
        reasons.append(Reason("parts", {"count": question.parts}))
    reasons += [Reason(cue) for cue in sorted(question.cues)]  # each cue is its reason's code
    if question.tokens > thresholds.long_question_tokens:
        reasons.append(Reason("long", {"tokens": question.tokens}))
    similarity, margin = evidence.top_similarity, evidence.margin
    if similarity is not None and similarity < thresholds.weak_similarity:
        reasons.append(Reason("weak", {"similarity": similarity}))
    elif margin is not None and margin < thresholds.ambiguous_margin:
        reasons.append(Reason("ambiguous"))
    if evidence.documents >= 3:
        reasons.append(Reason("spread", {"documents": evidence.documents}))
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

    `cloud` and `budget_left_usd` are read at every decision, so health and spending are live;
    `local_on_server`: the local route runs on the user's model server (its reasons say so).
    """

    settings: RoutingSettings
    local_model: str
    cloud: Callable[[], Sequence[CloudModel]]
    budget_left_usd: Callable[[], float]
    thresholds: Thresholds = Thresholds()
    local_on_server: bool = False

    def decide(
        self, question: str, passages: Sequence[Passage], requested: Route | None = None
    ) -> RouteDecision:
        features = QuestionFeatures.read(question)
        if requested == "local" or (requested is None and self.settings.mode == "local"):
            return self._local(Reason("asked_local" if requested else "mode_local"))
        if requested == "cloud" and (refused := self.cloud_unavailable()):
            raise RouteUnavailable(refused)
        if self.settings.privacy == "never":
            return self._local(Reason("privacy"))
        models = list(self.cloud())
        if not models:
            # Read all the same: a question that looked hard says so, and the window suggests
            # a cloud model for questions like it.
            reasons = hardness(features, RetrievalConfidence.read(passages), self.thresholds)
            if self.thresholds.escalates(reasons):
                return self._local(Reason("no_cloud_hard", parts=tuple(reasons[:3])))
            return self._local(Reason("no_cloud"))
        chosen = self._cloud_model(features, models)
        forced = requested == "cloud" or self.settings.mode == "cloud"
        if chosen is None:
            return self._local(Reason("cloud_down", {"down": _down(models)}))
        if self.budget_left_usd() <= 0:
            return self._local(_budget_spent(self.settings.monthly_budget_usd))
        if forced:
            why = Reason("asked_cloud" if requested else "mode_cloud")
            return RouteDecision("cloud", chosen.model, why)
        reasons = hardness(features, RetrievalConfidence.read(passages), self.thresholds)
        if self.thresholds.escalates(reasons):
            return RouteDecision("cloud", chosen.model, Reason("hard", parts=tuple(reasons[:3])))
        evidence = tuple(reasons) or (Reason("strong_evidence"),)
        return self._local(Reason("simple", parts=evidence))

    def cloud_unavailable(self) -> str | None:
        """Why no question can go to the cloud now (None: one can), in English: what a
        request for the cloud is refused with."""
        refusal = self.cloud_refusal()
        return None if refusal is None else refusal.text

    def cloud_refusal(self) -> Reason | None:
        """The same as a code: what the window says beside its "Cloud only" choice."""
        if self.settings.privacy == "never":
            return Reason("privacy_refuses")
        models = list(self.cloud())
        if not models:
            return Reason("no_cloud_set_up")
        if not any(model.healthy for model in models):
            return Reason("all_down", {"down": _down(models)})
        if self.budget_left_usd() <= 0:
            return _budget_spent(self.settings.monthly_budget_usd)
        return None

    def escalation(self, question: str, why: Reason) -> RouteDecision | None:
        """Only with the cascade on, the cloud allowed, up and within budget."""
        if not self.settings.cascade or self.settings.privacy == "never":
            return None
        if self.budget_left_usd() <= 0:
            return None
        chosen = self._cloud_model(QuestionFeatures.read(question), list(self.cloud()))
        if chosen is None:
            return None
        return RouteDecision("cloud", chosen.model, Reason("cascade", parts=(why,)))

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
        return RouteDecision("fallback", chosen.model, Reason("rescue", {"error": why}))

    def _local(self, reason: Reason) -> RouteDecision:
        if self.local_on_server and reason.code in _ON_SERVER:
            reason = Reason(_ON_SERVER[reason.code], reason.values, reason.parts)
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


# A reason for keeping a question local that names where it stays: the server's code where the
# local route runs on the user's model server.
_ON_SERVER = {
    "asked_local": "asked_server",
    "mode_local": "mode_server",
    "privacy": "privacy_server",
}


def _down(models: Sequence[CloudModel]) -> str:
    return "; ".join(f"{m.server}: {m.detail or 'down'}" for m in models)


def _budget_spent(budget_usd: float) -> Reason:
    return Reason("budget_spent", {"budget_usd": budget_usd})
