"""Record the commits people pushed to the job branch once they are taken into the record (a
human accepted them at the `human_commit` gate, or the job found them there when ending): who
wrote each, its subject and the files it touched, read from git (jobs/domain/human_commits.py
holds the record and how the change note lists it)."""

from __future__ import annotations

from jobs.domain.human_commits import KEPT_FILES, HumanCommit, login_from_email
from jobs.domain.reconcile import BranchDecision, BranchFacts, SyncKind, describe
from jobs.engine.context import JobContext
from jobs.ports import Workspace


def record_human_commits(engine: JobContext, facts: BranchFacts,
                         decision: BranchDecision) -> None:
    """Add to the record each commit by someone else that `decision` takes in (an ADVANCE over
    foreign commits); already recorded ones are kept once."""
    if decision.kind is not SyncKind.ADVANCE or not decision.foreign:
        return
    job, repo = engine.job, engine.services.repository
    foreign = set(decision.foreign)
    known = {commit.sha for commit in job.human_commits}
    for commit in facts.commits:
        if commit.sha in known or describe(commit) not in foreign:
            continue
        read = read_commit(repo, commit.sha)
        read.accepted_at = engine.now()
        job.human_commits.append(read)
        engine.event("human_commit", f"commit {commit.sha[:7]} {commit.subject!r} by "
                     f"{read.by} taken into the job")


def read_commit(repo: Workspace, sha: str) -> HumanCommit:
    """`sha`'s author, subject and the files it touched (against its first parent)."""
    parents, name, email, subject = (
        repo.git("show", "-s", "--format=%P%x00%an%x00%ae%x00%s", sha).rstrip("\n")
        .split("\x00", 3))
    first = parents.split()[0] if parents.split() else None
    changed = (repo.git("diff", "--name-only", "--no-renames", "-z", first, sha) if first else
               repo.git("diff-tree", "-r", "--no-commit-id", "--name-only", "-z", "--root", sha))
    files = sorted({path for path in changed.split("\x00") if path})
    return HumanCommit(sha=sha, author=name, login=login_from_email(email), subject=subject,
                       files=files[:KEPT_FILES], more_files=max(0, len(files) - KEPT_FILES))
