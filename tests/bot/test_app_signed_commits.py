"""Issue 24's story through the App against the strict fake GitHub (signed webhooks, the real
worker, git over HTTP with the installation token): a repository whose base requires signed
commits, whose base gains a workflow change while the job runs (an installation with and
without `workflows: write`), and whose maintainer types `retry` at the CI gate, ends with a
mergeable pull request whose every commit GitHub shows "Verified"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.features.base_moves.parts import CONFLICT
from jobs.features.base_moves.record import moves
from jobs.features.ci.parts import CI_FAILED
from jobs.kernel.model import Gate, JobStatus
from tests.bot.ci_world import pull_number, waited_sha
from tests.bot.conftest import REPO, SECRET, World, open_world
from tests.kit import github_git
from tests.kit.github_ci import CiPlayer
from tests.kit.github_ci_model import Ruleset
from tests.kit.github_routes_git import update_branch
from tests.kit.local_e2e import CI_WORKFLOW, config_text, sample_files

WORKFLOW = ".github/workflows/ci.yml"
BUMPED = CI_WORKFLOW[WORKFLOW].replace("runs-on: ubuntu-latest", "runs-on: ubuntu-24.04")


MATRIX = [f"tests ({python}, {system})" for python in ("3.10", "3.11", "3.12", "3.13", "3.14")
          for system in ("ubuntu", "macos", "windows")][:14]


def matrix_log(name: str) -> str:
    """A long Actions log of non-ASCII lines (each 2-3 UTF-8 bytes a character)."""
    return "".join(f"{n:04d} ✗ Prüfung fehlgeschlagen in {name}: «{'ü' * 180}» — 断言失败 {'语' * 60}\n"
                   for n in range(400))


def assert_within_githubs_limits(world: World, pull: int, branch: str) -> None:
    """The gate comment (posted once, to the maintainer, with its command), the PR body and
    every check-run output are within GitHub's limits, and GitHub refused nothing."""
    gates = [b for b in world.bodies(pull) if "Waiting at gate `ci_failed`" in b]
    assert len(gates) == 1, len(gates)
    [gate] = gates
    assert "@maria" in gate and "/stepwise retry" in gate and len(gate) <= 65_536
    assert all(name in gate for name in MATRIX[:1]) and "ü" in gate
    assert "Too long for GitHub" in gate  # cut to fit (the logs alone are far over the limit)
    card = world.gh.repos[REPO].pulls[pull].body or ""
    assert 0 < len(card) <= 65_536
    ours = [run for run in world.repo.ci.runs.values() if run.app.slug == "stepwise"]
    for run in world.repo.ci.runs.values():
        for text in (run.title, run.summary, run.text):
            assert len((text or "").encode()) <= 65_535, (run.name, len((text or "").encode()))
    assert any(len((run.text or "").encode()) > 60_000 for run in ours)  # full, yet within
    assert not [(r.method, r.path) for r in world.gh.requests if r.status == 422
                and re.search(r"/(comments|pulls|issues|check-runs)\b", r.path)]
    assert sum(len(world.gh.comments_on(world.repo, n)) for n in (1, pull)) < 30  # no loop


def signed_world(tmp_path: Path, redis_url: str, **config: Any) -> Iterator[World]:
    files = {**sample_files(config=config_text(**config)), **CI_WORKFLOW}
    with open_world(tmp_path, redis_url, files=files, ci_poll_s=30) as world:
        world.repo.ci.rulesets.append(Ruleset(1, "signed", ["~DEFAULT_BRANCH"], [],
                                              required_signatures=True))
        yield world


def verified(world: World, sha: str) -> bool:
    client = world.gh.client()
    data = client.rest("2022-11-28").repos.get_commit(*REPO.split("/"), sha).json()
    return bool(data["commit"]["verification"]["verified"])


def branch_commits(world: World, branch: str) -> list[github_git.CommitInfo]:
    base = world.gh.branch_head(REPO, "main")
    return github_git.log(world.repo.path, f"{base}..refs/heads/{branch}")


def test_commit_via_git_on_a_base_requiring_signatures_does_not_start(
        tmp_path: Path, redis_url: str) -> None:
    for world in signed_world(tmp_path, redis_url, commit_via="git"):
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        assert world.ctx.store.find(REPO, 1) is None
        [said] = [b for b in world.bodies(1) if b.startswith("Stepwise cannot start")]
        assert "`main` requires signed commits" in said and "`commit_via: git`" in said
        assert "remove `commit_via: git`" in said


@pytest.mark.slow
@pytest.mark.parametrize("workflows", ["write", "none"])
def test_signed_base_workflow_change_and_retry_end_in_a_mergeable_verified_pull_request(
        tmp_path: Path, redis_url: str, workflows: str) -> None:
    for world in signed_world(tmp_path, redis_url, ci={"wait": "per_milestone"},
                              update_from_base="behind"):
        if workflows == "none":  # an installation made before app.yml asked for it
            del world.gh.installations[1].permissions["workflows"]
        ci = CiPlayer(world.gh, world.repo, deliver_to=world.url, secret=SECRET)
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        world.comment("/stepwise approve", by="maria")
        world.work()
        job = world.job()
        head = waited_sha(job)
        assert head == world.gh.branch_head(REPO, job.branch)
        assert all(verified(world, c.sha) for c in branch_commits(world, job.branch))

        # The base gains a workflow change (an action bump) while CI runs on milestone 1.
        world.gh.push_files(REPO, "main", {WORKFLOW: BUMPED}, "Bump the runner image")
        world.send("push", ref="refs/heads/main", sender="dependabot[bot]")
        world.work()

        # CI fails: 14 matrix jobs with long non-ASCII logs and 5 annotations each. Everything
        # GitHub is shown stays within its limits (the fake answers 422 past them) and the
        # gate reaches the maintainer, once; `retry`: Actions re-runs the failed jobs, green.
        for name in MATRIX:
            ci.report(head, name, "failure", log=matrix_log(name),
                      annotations=[("calc/alpha/sums.py", n, f"{name}: échec n°{n} ✗")
                                   for n in range(1, 6)])
        world.work()
        job = world.job()
        assert job.gate is not None and job.gate.kind == CI_FAILED
        pull = pull_number(world, job)
        assert_within_githubs_limits(world, pull, job.branch)
        world.comment("/stepwise retry", by="maria", on=pull)
        world.work()
        assert [r.status for r in world.gh.requests_to("POST", r"/rerun-failed-jobs$")] == [201]
        assert sorted(p.run.name for p in ci.rerun_requested("success")) == sorted(MATRIX)
        world.work()

        # Then to the end: green CI on each head waited on, milestones approved, and the
        # moved base merged (by Stepwise, or by hand where the App may not change workflows).
        conflicts = 0
        for _ in range(12):
            job = world.job()
            if job.status is JobStatus.COMPLETED:
                break
            if job.gate is None:
                ci.report(waited_sha(job), "tests", "success")
            elif job.gate.kind == CONFLICT:
                conflicts += 1
                reason = job.gate.reason
                assert workflows == "none" and f"`{WORKFLOW}`" in reason
                assert "no `workflows: write` permission" in reason
                # GitHub refuses the Git Data API at the tree, before any ref moves
                assert "403 Resource not accessible by integration" in reason
                assert "git merge origin/main" in reason and "**Update branch**" in reason
                update_branch(world.gh, world.repo, pull)  # the maintainer presses the button
                world.send("push", ref=f"refs/heads/{job.branch}", sender="maria")
                world.comment("/stepwise approve", by="maria", on=pull)
            else:
                assert job.gate.kind is Gate.MILESTONE, (job.gate.kind, job.gate.reason)
                world.comment("/stepwise approve", by="maria", on=pull)
            world.work()
        job = world.job()
        assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
        assert world.gh.read_file(REPO, WORKFLOW, ref=job.branch) == BUMPED
        [merge] = moves(job).merges
        if workflows == "none":
            assert conflicts == 1 and merge.by == "human"
            assert sum("Waiting at gate `conflict`" in b for b in world.bodies(pull)) == 1
        else:
            assert conflicts == 0 and merge.by != "human"
        assert not [r for r in world.gh.requests if r.path.endswith("/rerequest")]
        commits = branch_commits(world, job.branch)
        assert len(commits) >= 5 and all(verified(world, c.sha) for c in commits)
        human = {m.commit for m in moves(job).merges if m.by == "human"}  # the Update button's
        assert {c.author.split(" <")[0] for c in commits if c.sha not in human} == \
            {"stepwise[bot]"}  # the App's bot user: GitHub signs no commit with a custom author
        client = world.gh.client()  # kept: githubkit's namespaces need their client alive
        pulls = client.rest("2022-11-28").pulls
        states = [pulls.get(*REPO.split("/"), pull).json() for _ in range(2)]
        assert states[-1]["mergeable"] is True and states[-1]["mergeable_state"] == "clean"
        merged = client.rest("2022-11-28").pulls.merge(*REPO.split("/"), pull)
        assert merged.json()["merged"] is True
