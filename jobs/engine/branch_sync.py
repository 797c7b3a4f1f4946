"""The branch is the shared truth: gather what git says about it, apply `reconcile`'s decision.

The decision (what the commits mean) is pure, in jobs/decisions/reconcile.py; this module runs
the git queries and writes the decision into the record, with the commits people pushed that the
decision takes in (accepted at the `human_commit` gate, brought by an accepted rewrite, or found
when ending): who wrote each, its subject and the files it touched, read from git
(jobs/kernel/human_commits.py holds that record and how the change note lists it).
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.basics.errors import StepwiseError
from jobs.decisions.reconcile import (
    Adopt,
    BranchCommit,
    BranchDecision,
    BranchFacts,
    CommitFound,
    NoteFound,
    SyncKind,
    describe,
    explain_commits,
    is_base_merge,
    ours,
    reconcile,
    recorded_commits,
)
from jobs.engine.context import JobContext
from jobs.kernel import trailers
from jobs.kernel.feature_parts import commit_kinds
from jobs.kernel.human_commits import KEPT_FILES, HumanCommit, login_from_email
from jobs.kernel.job import Job
from jobs.kernel.model import Acceptance, BatchStatus, Gate
from jobs.ports import Commit, Workspace


def branch_facts(repo: Workspace, job: Job) -> BranchFacts:
    """The branch as git sees it, relative to the recorded head."""
    head = repo.branch_head(job.branch)
    if head is None or head == job.head_sha:
        return BranchFacts(head=head)
    if not repo.is_ancestor(job.head_sha, head):
        lost = frozenset(b.commit for b in job.batches
                         if b.commit and not repo.is_ancestor(b.commit, head))
        return BranchFacts(head=head, descends=False, lost_commits=lost)
    commits = repo.commits(job.head_sha, head)
    if any(len(commit.parents) > 1 for commit in commits):
        commits = without_base_commits(repo, job, head, commits)
    return BranchFacts(head=head, commits=tuple(commits), own=own_commits(repo, job, commits))


def own_commits(repo: Workspace, job: Job, commits: Sequence[Commit]) -> frozenset[str]:
    """Which of the commits carrying this job's trailers (and not yet in the record) Stepwise
    made: asked of the workspace (in server mode, of GitHub) only for those. With git, only
    the commits the record says it made to land (a record of an earlier release, which holds
    none: its identity)."""
    recorded = recorded_commits(job)
    claimed = [c for c in commits if c.trailers.get(trailers.JOB) == job.id
               and c.sha not in recorded]
    made = frozenset(job.landing_commits) if job.landing_commits else None
    return repo.own_commits(claimed, made=made) if claimed else frozenset()


def without_base_commits(repo: Workspace, job: Job, head: str,
                         commits: Sequence[Commit]) -> list[Commit]:
    """Leave out the base's own commits that a merge of the base (ours or a maintainer's)
    brought onto the branch: they are not the branch's work (our own commits always stay)."""
    merged = [parent for c in commits if is_base_merge(job, c) for parent in c.parents[1:]]
    base = repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None
    exclude = [*merged, *([base] if base else [])]
    if not exclude:
        return list(commits)
    kept = {c.sha for c in repo.commits(job.head_sha, head, exclude=exclude)}
    return [c for c in commits if c.sha in kept or is_base_merge(job, c)]


def sync(engine: JobContext, *, open_gates: bool = True) -> bool:
    """Reconcile the record with the branch; True when the record changed or a gate opened."""
    job = engine.job
    facts = branch_facts(engine.services.repository, job)
    accept = Acceptance.BRANCH_HEAD in job.accepted
    if facts.head is not None:
        job.take(Acceptance.BRANCH_HEAD)  # used up once the branch was read
    decision = reconcile(job, facts, accept=accept, open_gates=open_gates)
    record_human_commits(engine, facts, decision)  # saved with the decision
    return apply_decision(engine, decision)


def apply_decision(engine: JobContext, decision: BranchDecision) -> bool:
    job = engine.job
    if decision.kind is SyncKind.UNCHANGED:
        return False
    for meaning in decision.meanings:
        if isinstance(meaning, NoteFound):
            job.note_commit = meaning.sha
            continue
        if isinstance(meaning, CommitFound):
            for kind in commit_kinds():
                if kind.trailer == meaning.trailer and \
                        (said := kind.found(job, meaning.sha, meaning.value, engine.now())):
                    engine.event(kind.event, said)
            continue
        batch = job.batch(meaning.batch)
        if isinstance(meaning, Adopt):
            adopted = next((held for f in engine.features() if f.adopt is not None and
                            (held := f.adopt(engine, batch, meaning.sha)) is not None),
                           BatchStatus.COMPLETED)  # CI per_batch: a candidate awaiting CI
            if batch.status is not adopted:
                batch.set_status(adopted)
            batch.commit, batch.adopted, batch.consecutive_failures = meaning.sha, True, 0
            engine.event("adopt", f"batch {meaning.batch} found committed as "
                         f"{meaning.sha[:7]}; adopted", meaning.batch)
        else:
            batch.set_status(BatchStatus.REVERTED)
            batch.reason, batch.revert_commit = meaning.reason, meaning.sha
            engine.event("revert", f"batch {meaning.batch} {meaning.reason}", meaning.batch)
    if decision.kind is SyncKind.HUMAN_COMMIT:
        engine.open(Gate.HUMAN_COMMIT, decision.gate_reason)
        return True
    if decision.kind is SyncKind.FORGET:
        # A reverted batch stays reverted: its change is off the branch either way.
        for number in decision.forget:
            batch = job.batch(number)
            if batch.status is not BatchStatus.PENDING:
                batch.set_status(BatchStatus.PENDING)
            batch.commit, batch.adopted = None, False
        engine.event("sync", f"continuing on the rewritten branch at {(decision.head or '')[:7]}")
    job.head_sha = decision.head or job.head_sha
    engine.save()
    return True


def foreign_commits(engine: JobContext) -> list[str]:
    """Descriptions of commits on the branch that are not ours (nothing is recorded)."""
    job = engine.job
    facts = branch_facts(engine.services.repository, job)
    if facts.head is None or facts.head == job.head_sha:
        return []
    if not facts.descends:
        return ["its history was rewritten"]
    return list(explain_commits(job, facts.commits, facts.own)[1])


def adopt_only(engine: JobContext) -> None:
    """Record our own commits that reached the branch, without opening gates (used when ending)."""
    try:
        sync(engine, open_gates=False)
    except StepwiseError:
        return


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
    this job's nor the base's."""
    fork = repo.merge_base(job.head_sha, head)
    if not fork:
        return []
    base = repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None
    exclude = [sha for sha in (job.base_sha, base) if sha]
    found = repo.commits(fork, head, exclude=exclude)
    own = own_commits(repo, job, found)  # a rebase keeps our trailers, tree and identity
    return [commit for commit in found if commit.sha not in recorded_commits(job)
            and not ours(job, commit, own)]


def read_commit(repo: Workspace, sha: str) -> HumanCommit:
    """`sha`'s author, subject and the files it touched (against its first parent)."""
    who = repo.authorship(sha)
    files = sorted(repo.changes(None, sha))
    return HumanCommit(sha=sha, author=who.name, login=login_from_email(who.email),
                       subject=who.subject, files=files[:KEPT_FILES],
                       more_files=max(0, len(files) - KEPT_FILES))
