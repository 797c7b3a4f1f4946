"""Catalog items."""

from dataclasses import dataclass

from shelf import money


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    price_cents: int

    def label(self) -> str:
        return f"{self.name} ({money.as_text(self.price_cents)})"
