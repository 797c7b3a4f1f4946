"""A shopping cart."""

from shelf import money


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[str, int, int]] = []

    def add(self, name: str, unit_cents: int, quantity: int = 1) -> None:
        self.lines.append((name, unit_cents, quantity))

    def total_cents(self) -> int:
        return sum(unit * quantity for _, unit, quantity in self.lines)

    def total_text(self) -> str:
        return money.as_text(self.total_cents())
