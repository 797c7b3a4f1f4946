"""The sales summary over several days."""

from shelf import money
from shelf.reports.daily import daily_line


def summary(days: dict[str, int]) -> str:
    lines = [daily_line(day, cents) for day, cents in sorted(days.items())]
    lines.append(f"Total: {money.as_text(sum(days.values()))}")
    return "\n".join(lines)
