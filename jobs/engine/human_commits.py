"""Record the commits people pushed to the job branch once they are taken into the record (a
human accepted them at the `human_commit` gate, an accepted rewrite brought them, or the job
found them there when ending): who wrote each, its subject and the files it touched, read from
git (jobs/kernel/human_commits.py holds the record and how the change note lists it)."""

from __future__ import annotations

from jobs.decisions.reconcile import BranchCommit, BranchDecision, BranchFacts, SyncKind, describe
from jobs.engine.context import JobContext
from jobs.kernel import trailers
from jobs.kernel.human_commits import KEPT_FILES, HumanCommit, login_from_email
from jobs.kernel.job import Job
from jobs.ports import Workspace


def record_human_commits(engine: JobContext, facts: BranchFacts,
                         decision: BranchDecision) -> None:
    """Add to the record each commit by someone else that `decision` takes in (foreign commits
    the branch advances over, or those of an accepted rewrite); each is kept once."""
    job, repo = engine.job, engine.services.repository
    known = {commit.sha for commit in job.human_commits}
    for commit in people_commits(repo, job, facts, decision):
        if commit.sha in known:
            continue
        read = read_commit(repo, commit.sha)
        read.accepted_at = engine.now()
        job.human_commits.append(read)
        known.add(commit.sha)
        engine.event("human_commit", f"commit {commit.sha[:7]} {commit.subject!r} by "
                     f"{read.by} taken into the job")


def people_commits(repo: Workspace, job: Job, facts: BranchFacts,
                   decision: BranchDecision) -> list[BranchCommit]:
    """The commits by people `decision` takes in, oldest first."""
    if decision.kind is SyncKind.ADVANCE and decision.foreign:
        foreign = set(decision.foreign)
        return [commit for commit in facts.commits if describe(commit) in foreign]
    if decision.kind is SyncKind.FORGET and decision.head:
        return rewritten_by_people(repo, job, decision.head)
    return []


def rewritten_by_people(repo: Workspace, job: Job, head: str) -> list[BranchCommit]:
    """On a rewritten branch: the commits since it forked from the recorded head that are not
    this job's (a rebase keeps our trailers) nor the base's."""
    fork = repo.git("merge-base", job.head_sha, head, check=False).strip()
    if not fork:
        return []
    base = repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None
    exclude = [sha for sha in (job.base_sha, base) if sha]
    return [commit for commit in repo.commits(fork, head, exclude=exclude)
            if commit.trailers.get(trailers.JOB) != job.id]


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
