"""Repository-relative glob matching (`*`, `?`, `[...]`, `**`) and safe path checks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import PurePosixPath


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    # A pattern without a slash matches the file name at any depth, as in .gitignore.
    anchored = "/" in pattern.rstrip("/")
    body = pattern.lstrip("/") if anchored else pattern
    if pattern.endswith("/"):
        body = body.rstrip("/") + "/**"
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = body.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                inner = body[i + 1 : end].replace("\\", "\\\\")
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append(f"[{inner}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(prefix + "".join(out) + r"\Z")


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
