"""What the model's tools may reach: tracked regular files to read, the batch's files to write.

Every refusal is a ToolFailure whose message starts the tool result (`error: ...`), says why and
what to do instead. Soft failures (no match, a bad range, a typo in a path) and hard ones (a
refused path, a crash) are counted apart by the safety net.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from jobs.adapters.safe_paths import UnsafePathError, read_regular, write_regular

SOFT, HARD = "soft", "hard"


class ToolFailure(Exception):
    """A tool call that could not be carried out; `kind` names the error for the statistics."""

    def __init__(self, kind: str, message: str, *, severity: str = SOFT) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.severity = severity

    @property
    def text(self) -> str:
        return f"error: {self.message}"


def clean_path(raw: str) -> str:
    """A model's path as the repository-relative form (`./a/b`, `a//b` → `a/b`); `.` for the root."""
    text = raw.strip().replace("\\", "/")
    if text in ("", ".", "./", "/"):
        return "."
    if text.startswith("/"):
        raise ToolFailure("refused_path", f"`{raw}` is absolute; paths are relative to the "
                          "repository root, e.g. `src/app.py`", severity=HARD)
    parts = [p for p in PurePosixPath(text).parts if p != "."]
    if ".." in parts:
        raise ToolFailure("refused_path", f"`{raw}` leaves the repository; stay inside it",
                          severity=HARD)
    if any(p.lower() == ".git" for p in parts):
        raise ToolFailure("refused_path", f"`{raw}` is inside `.git`, which no tool reads",
                          severity=HARD)
    return "/".join(parts) or "."


@dataclass(frozen=True)
class Scope:
    worktree: Path
    readable: frozenset[str]  # tracked regular files outside protected paths
    writable: tuple[str, ...]  # the batch's files

    @classmethod
    def of(cls, worktree: Path, readable: Iterable[str], writable: Iterable[str]) -> Scope:
        batch = tuple(writable)
        return cls(worktree, frozenset(readable) | frozenset(batch), batch)

    def under(self, directory: str) -> list[str]:
        """Readable files under `directory` (`.` for all), sorted."""
        if directory == ".":
            return sorted(self.readable)
        prefix = directory.rstrip("/") + "/"
        return sorted(p for p in self.readable if p.startswith(prefix))

    def readable_path(self, raw: str) -> str:
        path = clean_path(raw)
        if path in self.readable:
            return path
        if self.under(path):
            raise ToolFailure("is_directory", f"`{path}` is a directory; use list_files or "
                              "search on it, read_file on one of its files")
        if (self.worktree / path).exists() or (self.worktree / path).is_symlink():
            raise ToolFailure("refused_path", f"`{path}` is not a tracked regular file the job "
                              "may read (untracked, ignored, a link, or protected); read tracked "
                              "files only", severity=HARD)
        close = difflib.get_close_matches(path, sorted(self.readable), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(f'`{c}`' for c in close)}?" if close else \
            "; use list_files to see the files"
        raise ToolFailure("no_such_file", f"`{path}` does not exist{hint}")

    def writable_path(self, raw: str) -> str:
        path = clean_path(raw)
        if path not in self.writable:
            raise ToolFailure("refused_write", f"`{path}` is not one of this batch's files "
                              f"({', '.join(self.writable)}); you may read it but change only "
                              "the batch's files", severity=HARD)
        return path

    def read_text(self, path: str) -> str:
        try:
            data = read_regular(self.worktree, path)
        except UnsafePathError as exc:
            raise ToolFailure("refused_path", f"{exc.message}; read tracked regular files only",
                              severity=HARD) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolFailure("binary_file", f"`{path}` is not UTF-8 text (binary?); it cannot "
                              "be read or edited here") from None

    def write_text(self, path: str, text: str) -> None:
        try:
            write_regular(self.worktree, path, text.encode("utf-8"))
        except UnsafePathError as exc:
            raise ToolFailure("refused_write", exc.message, severity=HARD) from None
