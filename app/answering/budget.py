"""This month's cloud spending against the monthly budget: read from the answer history once,
then kept up to date by each answer's cost. The router reads what is left at every decision.

An answer from a cloud model the price table does not list has an unknown cost: it is counted,
so the budget can say that its sum is a lower bound, and never treated as free."""

from __future__ import annotations

from datetime import UTC, datetime

from app.index import Library, Spending


class Budget:
    def __init__(self, library: Library, monthly_usd: float) -> None:
        self.monthly_usd = monthly_usd
        self._library = library
        self._spent: Spending | None = None  # unknown until load()

    async def load(self) -> None:
        if self._spent is None:
            month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            self._spent = await self._library.spending_since(month)

    @property
    def spent(self) -> Spending:
        return self._spent or Spending(0.0, 0)

    def left_usd(self) -> float:
        return self.monthly_usd - self.spent.known_usd

    def spend(self, cost_usd: float | None) -> None:
        spent = self.spent
        if cost_usd is None:
            self._spent = Spending(spent.known_usd, spent.unpriced + 1)
        else:
            self._spent = Spending(spent.known_usd + cost_usd, spent.unpriced)

    def describe(self) -> str:
        """ "$0.0123 of $10.00 this month", and how many answers had no price."""
        text = f"${self.spent.known_usd:.4f} of ${self.monthly_usd:.2f} this month"
        if unpriced := self.spent.unpriced:
            text += f" + {unpriced} answer{'s' if unpriced > 1 else ''} of unknown cost"
        return text
