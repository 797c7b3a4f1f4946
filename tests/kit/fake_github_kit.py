"""Shared parts of the fake GitHub's own tests (no tests here): the repository they use, the
GraphQL ready-for-review mutation, a githubkit installation client built the way the app builds
it, and pushing a branch with the real git client."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from githubkit import AppAuthStrategy, GitHub

from tests.kit.github import FakeGitHub

OWNER, NAME = "octo", "widgets"
READY = """
mutation($id: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { id isDraft } }
}
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}


def installation_client(gh: FakeGitHub, pem: str, installation_id: int = 1, **options: Any) -> GitHub[Any]:
    """Built the way the app builds it (no helper from the fake), without retries or proxies."""
    app = GitHub(AppAuthStrategy(gh.app_id, pem), base_url=gh.base_url, auto_retry=False, trust_env=False,
                 **options)
    return app.with_auth(app.auth.as_installation(installation_id))


def run_git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def push_branch(clone_url: str, work: Path, branch: str, files: dict[str, str]) -> str:
    if not work.exists():
        run_git(work.parent, "clone", "-q", clone_url, work.name)
    run_git(work, "checkout", "-q", "-B", branch)
    for rel, text in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    run_git(work, "add", "-A")
    run_git(work, "commit", "-q", "-m", f"change on {branch}")
    run_git(work, "push", "-q", "origin", f"HEAD:refs/heads/{branch}")
    return run_git(work, "rev-parse", "HEAD")
