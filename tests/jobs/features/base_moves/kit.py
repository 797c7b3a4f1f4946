"""Shared steps of the base-moves tests (no tests here): moving `main` under a local job,
bringing a job to its first milestone, and reading the merges on the job branch."""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.workspace import CommitInfo, Repository
from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate
from tests.kit.local_e2e import Recorder, assert_exit, branch_head, issue, load_job, session
from tests.kit.repos import commit_all, git, write_files

AREA = "calc/alpha/area.py"


def move_base(repo: Path, files: dict[str, str | bytes], message: str = "base moves") -> str:
    """Commit `files` on `main`, the branch the job started from (the user's checkout)."""
    write_files(repo, files)
    return commit_all(repo, message)


def merge_commits(commits: list[CommitInfo]) -> list[CommitInfo]:
    return [c for c in commits if "Stepwise-Base-Merge" in c.trailers]


def job_branch_commits(repo: Path) -> list[CommitInfo]:
    """The job branch's first-parent commits since the job started (base commits left out)."""
    job = load_job(repo)
    head = branch_head(repo, job.branch)
    assert head is not None
    base = git(repo, "rev-parse", "main")
    return Repository(repo).commits(job.base_sha, head, exclude=[base])


def at_milestone(repo: Path, recorder: Recorder | None = None) -> None:
    """Plan, approve: batches 1 and 2 are committed and the job waits at milestone 1."""
    local = session(repo, sink=recorder)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
