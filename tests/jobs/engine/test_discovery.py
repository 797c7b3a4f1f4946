"""Discovery with git's help finds exactly what a scan of every file finds."""

from __future__ import annotations

import pytest

from jobs.adapters.workspace import Repository
from jobs.decisions.plan import find_targets
from jobs.engine.discovery import contents_for_patterns, required_literal, targets_at
from tests.conftest import RepoFactory
from tests.kit.repos import git


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"\bprint\(", "print("),
        (r"money\.as_text\(", "money.as_text("),
        (r"foo\d+barbaz", "barbaz"),
        (r"a|b", None),  # an alternation has no literal every match contains
        (r"(?i)print", None),  # case-insensitive: a fixed string would miss PRINT
        (r"ab", None),  # too short to be worth it
        (r"x\nprint", "print"),  # a literal never spans a newline (grep is line based)
        (r"(unclosed", None),
        (r"\w+é\w+", None),
        (r"naïve_call\(", "naïve_call("),
    ],
)
def test_required_literal(pattern: str, literal: str | None) -> None:
    assert required_literal(pattern) == literal


FILES: dict[str, str | bytes] = {
    "src/a.py": "print(1)\nx = 1\n",
    "src/b.py": "no calls here\n",
    "src/c.py": "def f():\n    return naïve_call(print(2))\n",
    "src/d.py": "print\n(3)\n",  # only a multi-line pattern finds this
    "src/bin.dat": b"\x00\x01print(",
    "docs/e.md": "print(4)\n",
}


@pytest.mark.parametrize("patterns", [
    [r"\bprint\("],
    [r"naïve_call\(", r"print\(\d\)"],
    [r"print\s*\(\d\)"],  # spans lines in d.py
    [r"p.int"],  # no literal: every file is read
])
def test_targets_equal_a_full_scan(repo_factory: RepoFactory, patterns: list[str]) -> None:
    path = repo_factory(FILES)
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    scope = sorted(p for p in FILES if p.startswith("src/"))
    every = {p: t for p, t in repo.read_texts(sha, scope).items() if t is not None}
    assert targets_at(repo, sha, scope, patterns) == find_targets(every, patterns)


def test_grep_reads_only_candidate_files(repo_factory: RepoFactory) -> None:
    path = repo_factory(FILES)
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    scope = sorted(p for p in FILES if p.startswith("src/"))
    read = contents_for_patterns(repo, sha, scope, [r"naïve_call\("])
    assert set(read) == {"src/c.py"}
