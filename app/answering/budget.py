"""This month's cloud spending against the monthly budget: read from the answer history once,
then kept up to date by each answer's cost. The router reads what is left at every decision."""

from __future__ import annotations

from datetime import UTC, datetime

from app.index import Library


class Budget:
    def __init__(self, library: Library, monthly_usd: float) -> None:
        self.monthly_usd = monthly_usd
        self._library = library
        self._spent: float | None = None  # unknown until load()

    async def load(self) -> None:
        if self._spent is None:
            month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            self._spent = await self._library.cost_since(month)

    def left_usd(self) -> float:
        return self.monthly_usd - (self._spent or 0.0)

    def spend(self, cost_usd: float) -> None:
        self._spent = (self._spent or 0.0) + cost_usd
