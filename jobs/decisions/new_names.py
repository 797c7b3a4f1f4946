"""Whether a file name an edit creates is safe to commit (pure): a name the guard refuses for
every repository, whatever the config allows (jobs/decisions/guard.py, rule `new_name`).

- control characters (C0, DEL, C1) and invisible formatting characters (bidirectional
  overrides, zero-width characters): a name that shows as something other than it is;
- names Windows cannot check out: the reserved device names (`CON`, `PRN`, `AUX`, `NUL`,
  `COM1`-`COM9`, `LPT1`-`LPT9`, with any extension), a part ending in `.` or a space, and the
  characters `<>:"|?*`;
- a name that collides with an existing file or directory on a case-insensitive or
  normalising file system (macOS, Windows): `Readme.md` next to `README.md`, or `café.py`
  written in NFD next to the NFC one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

WINDOWS_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                              *(f"COM{n}" for n in "123456789¹²³"),
                              *(f"LPT{n}" for n in "123456789¹²³")})
WINDOWS_FORBIDDEN = frozenset('<>:"|?*')


def folded(path: str) -> str:
    """The key under which a case-insensitive, normalising file system sees `path`."""
    return unicodedata.normalize("NFC", path).casefold()


def _hidden_character(part: str) -> str | None:
    for char in part:
        if unicodedata.category(char) in ("Cc", "Cf"):
            return f"U+{ord(char):04X}"
    return None


def name_problem(path: str) -> str | None:
    """Why the name `path` cannot be committed anywhere, or None."""
    for part in path.split("/"):
        hidden = _hidden_character(part)
        if hidden is not None:
            return (f"its name holds the control or invisible character {hidden}, so it shows "
                    "as a different name")
        stem = part.split(".", 1)[0].rstrip(" ").upper()
        if stem in WINDOWS_RESERVED:
            return f"`{part}` is a device name Windows reserves; it cannot be checked out there"
        if part.endswith((".", " ")):
            return f"`{part}` ends in a dot or a space, which Windows drops"
        forbidden = sorted(WINDOWS_FORBIDDEN & set(part))
        if forbidden:
            return f"`{part}` holds `{forbidden[0]}`, which Windows forbids in file names"
    return None


def collision(path: str, existing: Iterable[str]) -> str | None:
    """The existing file or directory `path` (or one of its directories) would share a name
    with on a case-insensitive or normalising file system, or None."""
    taken: dict[str, str] = {}
    for other in existing:
        parts = other.split("/")
        for end in range(1, len(parts) + 1):
            name = "/".join(parts[:end])
            taken.setdefault(folded(name), name)
    parts = path.split("/")
    for end in range(1, len(parts) + 1):
        name = "/".join(parts[:end])
        found = taken.get(folded(name))
        if found is not None and found != name:
            return found
    return None
