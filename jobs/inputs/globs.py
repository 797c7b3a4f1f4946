"""Repository-relative glob matching (`*`, `?`, `[...]`, `**`) and safe path checks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    # As in .gitignore: a pattern without a slash matches a name at any depth, a pattern that
    # names a directory covers everything below it, `**` is special only as a whole segment,
    # and nothing but a `**` segment matches a slash.
    anchored = "/" in pattern.rstrip("/")
    body = pattern.strip("/") if anchored else pattern.rstrip("/")
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        whole_segment = body.startswith("**", i) and (i == 0 or body[i - 1] == "/") and (
            i + 2 == len(body) or body[i + 2] == "/"
        )
        if whole_segment and i + 2 < len(body):
            out.append("(?:.*/)?")
            i += 3
        elif whole_segment:
            out.append(".*")
            i += 2
        elif char == "*":
            while i < len(body) and body[i] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = body.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                inner = body[i + 1 : end].replace("\\", "\\\\").replace("/", "")
                negated = inner.startswith(("!", "^"))
                inner = inner[1:] if negated else inner
                out.append(f"[^/{inner}]" if negated else f"[{inner}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    below = r"/.*\Z" if pattern.endswith("/") else r"(?:/.*)?\Z"
    return re.compile(prefix + "".join(out) + below)


def glob_match(path: str, pattern: str) -> bool:
    """Whether the repository-relative `path` matches `pattern`."""
    return _compile(pattern).match(path) is not None


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    return any(glob_match(path, pattern) for pattern in patterns)


def unsafe_path_reason(path: str) -> str | None:
    """Why a repository-relative path or glob is unsafe (absolute, escaping, inside .git), or None."""
    if not path or not path.strip():
        return "it is empty"
    if "\x00" in path or "\\" in path:
        return "it contains a backslash or NUL byte; use forward slashes"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "it is absolute; paths are relative to the repository root"
    parts = PurePosixPath(path).parts
    if ".." in parts:
        return "it contains `..`; paths must stay inside the repository"
    if parts and parts[0] == ".git":
        return "it points into `.git/`"
    return None
