"""What Redis hands back, read as Python values: a string from bytes or str (a client with or
without `decode_responses`), and a stored JSON document that may be missing or damaged."""

from __future__ import annotations

import json
from typing import Any


def as_text(value: bytes | str | None) -> str:
    """`value` as a string ("" for a missing key)."""
    return value.decode() if isinstance(value, bytes) else (value or "")


def as_document(raw: bytes | str | None) -> dict[str, Any] | None:
    """A stored JSON object, or None when the key is missing or holds anything else."""
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None
