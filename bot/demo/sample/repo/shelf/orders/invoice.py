"""Invoices printed from a cart."""

from shelf import money
from shelf.orders.cart import Cart


def invoice_lines(cart: Cart) -> list[str]:
    lines = []
    for name, unit, quantity in cart.lines:
        lines.append(f"{quantity} x {name} @ {money.as_text(unit)} = {money.as_text(unit * quantity)}")
    lines.append(f"Total: {money.as_text(cart.total_cents())}")
    return lines
