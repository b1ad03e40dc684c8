"""Which route answers a question, and why: a policy object that returns route + model + reason.

Only the local route exists in the core; the cloud issue adds an auto policy that reads the
question, the retrieval confidence, privacy rules, the budget and cloud health.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from app.errors import DocentError
from app.index import Passage

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
