"""The GitHub App end to end: signed webhooks over real HTTP, a real Redis and RQ worker, the real
githubkit client against the loopback fake GitHub, and real git pushes to its bare repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.features.bisect.record import bisect_of
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit.github_permissions import granted_permissions, named_permissions
from tests.kit.local_e2e import BROKEN_MODULE


@pytest.fixture(params=[{}, {"enterprise": True}], ids=["github.com", "ghes"])
def any_world(request: pytest.FixtureRequest, tmp_path: Path, redis_url: str) -> Iterator[World]:
    """github.com, and a GitHub Enterprise Server: /api/v3, GraphQL at /api/graphql, and only
    REST API version 2022-11-28 (any other answered 400, as GHES does)."""
    options: dict[str, Any] = request.param
    with open_world(tmp_path, redis_url, github=options) as opened:
        yield opened


def test_the_whole_story_through_signed_webhooks(any_world: World) -> None:
    world = any_world
    # A maintainer labels the issue: the plan is posted on the issue; no PR before a commit.
    assert world.send("issues.labeled", issue_number=1, sender="maria").status_code == 202
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN
    plan = [b for b in world.bodies(1) if "Plan for #1" in b]
    assert len(plan) == 1 and "`/stepwise approve`" in plan[0]
    assert world.gh.pull_for(world.repo, job.branch) is None

    # Approve: batch 1 is committed and pushed, the draft PR opens, milestone 1 reports.
    world.comment("/stepwise approve", by="maria")
    world.work()
    job = world.job()
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert world.gh.branch_head(world.repo, job.branch) == job.head_sha
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and pull.draft and "Stepwise #1" in pull.body
    assert job.gate.kind is Gate.MILESTONE
    assert any("Waiting at gate `milestone`" in b for b in world.bodies(pull.number))

    # A read-only user's approve is refused and changes nothing.
    version = job.version
    world.comment("/stepwise approve", by="rita", on=pull.number)
    world.work()
    assert world.job().version == version and world.job().gate.kind is Gate.MILESTONE
    assert any("Refused" in b and "@rita" in b for b in world.bodies(pull.number))

    # Approve again: batch 2 breaks the tests; it is split: its good file is committed as
    # batch 2, the broken one is set aside as batch 4 (at the end), and milestone 2 reports.
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.MILESTONE and job.batch(2).status is BatchStatus.COMPLETED
    assert job.batch(4).files == [BROKEN_MODULE] and bisect_of(job.batch(4)).split_from == 2

    # Approve: batch 3 is committed, then batch 4, alone, pauses with a failure report.
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.gate.kind is Gate.FAILURE and job.gate.batch == 4 and job.batch(4).commit is None
    report = [b for b in world.bodies(pull.number) if "Waiting at gate `failure`" in b]
    assert report and "validation_failed" in report[0] and "/stepwise skip <reason>" in report[0]

    # Skip it with a reason: the job completes.
    world.comment("/stepwise skip needs a manual import fix", by="maria", on=pull.number)
    world.work()
    job = world.job()
    assert job.batch(4).status is BatchStatus.SKIPPED
    assert job.status is JobStatus.COMPLETED, job.status
    log = world.gh.git_log(world.repo, job.branch)
    assert [sum(f"batch {n}/" in s for s in log) for n in (1, 2, 3, 4)] == [1, 1, 1, 0]
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert "needs a manual import fix" in note and job.batch(3).commit[:7] in note
    assert not world.gh.pull_for(world.repo, job.branch).draft
    assert f"{REPO}#{pull.number}:pr-ready" in world.gh.effects
    # The skipped batch's targets are still there: the summary says so, as the note does.
    assert job.final_review is not None and job.final_review.leftovers
    assert any(b.startswith("Stepwise completed with leftovers.") for b in world.bodies(1))
    assert "status `completed with leftovers`" in note
    # Every REST call named the API version this GitHub serves; none was refused.
    rest = [r for r in world.gh.requests if r.path != "/graphql"]
    assert rest and {r.headers.get("x-github-api-version") for r in rest} == {"2022-11-28"}
    assert not [r for r in world.gh.requests if r.status in (400, 403)]
    # app.yml grants nothing the story did not use (members: the team approvers' test;
    # statuses and actions: the CI stories of tests/bot/test_app_ci_e2e.py, on a repository
    # with CI; workflows: a base merge changing workflow files, test_app_signed_commits.py).
    used = named_permissions([r.accepted_permissions for r in world.gh.requests])
    assert set(granted_permissions()) - {"members", "statuses", "actions", "workflows"} <= used, \
        used
