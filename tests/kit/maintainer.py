"""What a maintainer does to a served Stepwise in the operations tests (real `stepwise serve`
and `stepwise worker` processes, the fake GitHub): a sample repository with its issue and a
maintainer, the label and comments delivered as GitHub delivers them, and the job waited for in
Redis."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from tests.kit.chaos.killing import wait_past_second_of
from tests.kit.chaos.sample import ISSUE_BODY, ISSUE_TITLE, sample_repo
from tests.kit.chaos.settings import MAINTAINER, OWNER
from tests.kit.github import FakeGitHub
from tests.kit.github_model import Comment, FakeRepo
from tests.kit.stepwise_procs import SECRET
from tests.kit.webhooks import deliver, make_event

WAIT_S = 120.0


def maintained_repo(gh: FakeGitHub, name: str, *, files: int = 2,
                    labels: Sequence[str] = ("stepwise",), require_plan_approval: bool = False,
                    batches_per_milestone: int | None = None) -> FakeRepo:
    """The sample repository OWNER/`name` with its issue #1 (carrying `labels`) and MAINTAINER
    maintaining."""
    repo = gh.add_repo(OWNER, name, sample_repo(files=files,
                                                require_plan_approval=require_plan_approval,
                                                batches_per_milestone=batches_per_milestone))
    gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER, labels=list(labels))
    gh.set_permission(repo, MAINTAINER, "maintain")
    return repo


def comment_event(repo: FakeRepo, posted: Comment, *, number: int = 1) -> dict[str, Any]:
    """GitHub's `issue_comment.created` payload of MAINTAINER's comment `posted` (its id and
    its timestamp, to the second, as GitHub's)."""
    payload = make_event("issue_comment.created", repo=repo, issue_number=number,
                         comment_body=posted.body, comment_user=MAINTAINER, sender=MAINTAINER,
                         comment_id=posted.id)
    payload["comment"]["created_at"] = posted.created_at.astimezone(UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    return payload


def label(web: str, repo: FakeRepo) -> None:
    """MAINTAINER labels issue #1 `stepwise`; the web app answers 202."""
    payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                         label="stepwise")
    response = deliver(web, "issues", payload, secret=SECRET, delivery_id=f"label-{repo.name}")
    assert response.status_code == 202, response.text


def say(web: str, gh: FakeGitHub, repo: FakeRepo, body: str, *, kind: str = "comment") -> None:
    """MAINTAINER comments `body` on issue #1 (delivery id `<kind>-<repo>-<comment id>`); the
    web app answers 202."""
    posted = gh.add_comment(repo, 1, body, user=MAINTAINER)
    response = deliver(web, "issue_comment", comment_event(repo, posted), secret=SECRET,
                       delivery_id=f"{kind}-{repo.name}-{posted.id}")
    assert response.status_code == 202, response.text


def approve(web: str, gh: FakeGitHub, repo: FakeRepo, job: Job) -> None:
    """MAINTAINER approves the job's open gate (a comment written after the gate opened)."""
    assert job.gate is not None
    wait_past_second_of(job.gate.opened_at)
    say(web, gh, repo, "/stepwise approve", kind="approve")


def wait_job(store: RedisStore, repo: FakeRepo, ok: Callable[[Job], object], what: str,
             log: Path) -> Job:
    """The job of issue #1 once `ok` holds of it; else fails naming `what`, with the log's
    tail."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        job = store.find(repo.full_name, 1)
        if job is not None and ok(job):
            return job
        time.sleep(0.3)
    raise AssertionError(f"{repo.name}: {what}\n{log.read_text()[-4000:]}")
