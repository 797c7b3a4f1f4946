"""The daily sales report."""

from shelf import money


def daily_line(day: str, sales_cents: int) -> str:
    return f"{day}: {money.as_text(sales_cents)}"
