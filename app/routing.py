"""Which route answers a question, and why: a policy object that returns route + model + reason.

Only the local route exists in the core; the cloud issue adds an auto policy that reads the
question, the retrieval confidence, privacy rules, the budget and cloud health.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from app.index import Passage

Route = Literal["local", "cloud", "cache", "fallback"]


@dataclass(frozen=True, slots=True)
class RouteDecision:
    route: Route
    model: str
    reason: str


class RoutePolicy(Protocol):
    def decide(self, question: str, passages: Sequence[Passage]) -> RouteDecision:
        """Cheap (well under 10 ms) and explainable: the reason is shown to the user."""
        ...


@dataclass(frozen=True, slots=True)
class LocalOnlyPolicy:
    model: str

    def decide(self, question: str, passages: Sequence[Passage]) -> RouteDecision:
        return RouteDecision("local", self.model, "local only: no cloud route is configured")
