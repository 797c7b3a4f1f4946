"""What the GitHub adapter's tests share (no tests here): the repository on the fake, a clock the
test moves, and small readers of what the fake was asked."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from bot.github.errors import ForgeError
from jobs.kernel.job import Job
from tests.kit.github import FakeGitHub

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"


class Clock:
    """Real time plus an offset the test moves; the fake GitHub and the adapter share it."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def utc(self) -> datetime:
        return datetime.fromtimestamp(self(), UTC).replace(microsecond=0)


def start_fake(root: Path, **options: Any) -> FakeGitHub:
    gh = FakeGitHub(root=root, **options).start()
    gh.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n", "README.md": "hi\n"},
                config="trigger_label: stepwise\n")
    return gh


def mints(gh: FakeGitHub) -> int:
    return len(gh.requests_to("POST", r"^/app/installations/1/access_tokens$"))


def used_tokens(gh: FakeGitHub) -> list[str]:
    return [r.headers["authorization"].split()[-1] for r in gh.requests if r.path.startswith("/repos/")]


def forge_error(call: Callable[[], object]) -> ForgeError:
    with pytest.raises(ForgeError) as caught:
        call()
    return caught.value


def failure_gate_job(gh: FakeGitHub) -> tuple[Installation, Job]:
    """octo/widgets on `gh` with an issue by maria, the installation's client, and a job waiting
    at its `failure` gate on that issue, with no pull request yet."""
    from tests.bot.taskcenter.conftest import build

    gh.add_repo(OWNER, NAME, {"a.py": "x = 1\n"})
    number = gh.add_issue(REPO, "t", "b", user="maria")
    client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                       base_url=gh.base_url).client(1)
    job = build("failure_gate", 0)
    job.repo, job.number, job.head_sha = REPO, number, job.base_sha
    job.server.pull = None
    return client, job
