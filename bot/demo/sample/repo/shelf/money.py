"""Money amounts, kept as integer cents."""

import warnings


def format_amount(cents: int) -> str:
    """`1234` -> `$12.34`."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}${cents // 100}.{cents % 100:02d}"


def as_text(cents: int) -> str:
    """Deprecated since 2.0: use format_amount()."""
    warnings.warn("as_text() is deprecated; use format_amount()", DeprecationWarning, stacklevel=2)
    return format_amount(cents)
