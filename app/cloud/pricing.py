"""Turning a cloud answer's token usage into money, from a user-editable price table."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from app.errors import DocentError

PRICES_FILE = "prices.toml"


class PriceTableError(DocentError):
    """The price table cannot be read."""


@dataclass(frozen=True, slots=True)
class Price:
    input_per_million: float
    output_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000


class PriceTable:
    def __init__(self, prices: dict[str, Price]) -> None:
        self.prices = prices

    @classmethod
    def load(cls, config_dir: Path) -> PriceTable:
        """The user's copy in the config folder if there is one, else the shipped table."""
        own = config_dir / PRICES_FILE
        source = own if own.exists() else resources.files("resources").joinpath(PRICES_FILE)
        try:
            raw = tomllib.loads(source.read_text(encoding="utf-8"))
            return cls(
                {
                    name: Price(float(entry["input"]), float(entry["output"]))
                    for name, entry in raw.get("models", {}).items()
                }
            )
        except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as error:
            raise PriceTableError(f"cannot read the price table {source}: {error}") from None

    def find(self, model: str) -> Price | None:
        """`provider/model` first, then the bare model name."""
        return self.prices.get(model) or self.prices.get(model.partition("/")[2])

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """None for a model the table does not list: its cost is unknown, not zero."""
        price = self.find(model)
        return price.cost(prompt_tokens, completion_tokens) if price else None
