"""Discounts."""

from shelf import money


def discounted(price_cents: int, percent: int) -> int:
    return price_cents - price_cents * percent // 100


def discount_text(price_cents: int, percent: int) -> str:
    return f"{money.as_text(discounted(price_cents, percent))} ({percent}% off)"
