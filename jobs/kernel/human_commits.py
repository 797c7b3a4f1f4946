"""Commits by people: a commit somebody pushed to the job branch that Stepwise took into the
record when a human accepted it at the `human_commit` gate (or found it there when ending).
The record keeps who wrote it, its subject and the files it touched, so the change note lists
it ("Commits by people") and every surface counts it through `tally` (pure, no I/O)."""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import Field

from jobs.basics import markdown_safe as md
from jobs.kernel.records import Record

# GitHub's private addresses: `12345+login@users.noreply.github.com` or `login@users.noreply...`.
_NOREPLY = re.compile(r"^(?:\d+\+)?(?P<login>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))"
                      r"@users\.noreply\.github\.com$", re.IGNORECASE)


SHOWN_FILES = 20  # the note names this many files of one commit, then counts the rest
KEPT_FILES = 200  # the record keeps this many (a commit of thousands keeps the record small)


class HumanCommit(Record):
    """One accepted commit by a person: its sha, author (name, and GitHub login when the
    address says it), subject, the files it touched, and when Stepwise accepted it."""

    sha: str
    author: str = ""
    login: str = ""
    subject: str = ""
    files: list[str] = Field(default_factory=list)
    more_files: int = 0  # files it touched beyond `files` (not kept, see KEPT_FILES)
    accepted_at: datetime | None = None

    @property
    def by(self) -> str:
        """"Ada Lovelace (@ada)", "Ada Lovelace", "@ada" or "unknown"."""
        if self.author and self.login:
            return f"{self.author} (@{self.login})"
        return self.author or (f"@{self.login}" if self.login else "unknown")


def login_from_email(email: str) -> str:
    """The GitHub login a commit's author address names (GitHub's noreply form), else ""."""
    match = _NOREPLY.match(email.strip())
    return match.group("login") if match else ""


def commits_by_people_lines(commits: list[HumanCommit]) -> list[str]:
    """The change note's "Commits by people" section (nothing when there are none)."""
    if not commits:
        return []
    lines = ["", "## Commits by people", ""]
    for commit in commits:
        shown = commit.files[:SHOWN_FILES]
        files = md.codes(shown) if shown else "none"
        more = len(commit.files) - len(shown) + commit.more_files
        if more:
            files += f" and {more} more"
        lines.append(f"- `{commit.sha[:7]}` {md.text(commit.subject or '(no subject)')} "
                     f"— by {md.text(commit.by)}; files: {files}")
    return lines
