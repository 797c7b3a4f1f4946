"""What the guard tests share (no tests here): the sample repository, its staged diff read exactly as
the engine reads it, the guard run on it, and assertions on the verdict."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from jobs.decisions.guard import GuardPolicy, GuardVerdict, Rule, Violation, check_diff
from tests.kit.repos import GIT_ENV, git

BASE: dict[str, str | bytes] = {
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "X = 1\n",
    "src/other.py": "Y = 2\n",
    "docs/readme.md": "hello\n",
    "tests/test_app.py": "def test_main():\n    assert True\n",
    "pyproject.toml": "[project]\nname = 'x'\n",
    ".github/workflows/ci.yml": "on: push\n",
    ".github/stepwise.yml": "validate: []\n",
    "run.sh": "echo hi\n",
}
SCOPE = ("src/app.py", "src/util.py", "src/other.py")
ALL_FLAGS: dict[str, Any] = {
    "allow_deletions": True,
    "allow_new_files": True,
    "allow_test_edits": True,
    "allow_manifest_edits": True,
}


def staged_diff(repo: Path) -> str:
    """Exactly the engine's command. Not `support.git`: its strip() would cut a trailing
    context line and make the last hunk short."""
    git(repo, "add", "-A")
    done = subprocess.run(
        [
            "git",
            "-c",
            "core.quotepath=false",
            "diff",
            "--cached",
            "-M",
            "--no-color",
            "--no-ext-diff",
            "HEAD",
        ],
        cwd=repo,
        env={**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull},
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", errors="surrogateescape")


def guard(
    repo: Path, *, batch: tuple[str, ...] = (), scope: tuple[str, ...] = SCOPE, **policy: Any
) -> GuardVerdict:
    return check_diff(
        staged_diff(repo), batch_files=batch, scope_files=scope, policy=GuardPolicy(**policy)
    )


def found(verdict: GuardVerdict) -> set[tuple[str, Rule]]:
    return {(v.path, v.rule) for v in verdict.violations}


def assert_refused(verdict: GuardVerdict, path: str, rule: Rule) -> Violation:
    """The verdict refuses, and its report names the path and the rule."""
    assert not verdict.ok
    assert (path, rule) in found(verdict), verdict.describe()
    assert f"- {path}: {rule.value} — " in verdict.describe()
    return next(v for v in verdict.violations if (v.path, v.rule) == (path, rule))
