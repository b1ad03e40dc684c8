"""The health of a cloud route's MCP session, as the status bar shows it. Kept apart from the
client so the window can show it without importing the MCP SDK (a large share of start-up)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum


class HealthState(StrEnum):
    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Health:
    server: str
    state: HealthState
    detail: str = ""

    def describe(self) -> str:
        return f"{self.server}: {self.state}" + (f" ({self.detail})" if self.detail else "")


HealthListener = Callable[[Health], None]
