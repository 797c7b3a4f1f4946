"""The branch is the shared truth: gather what git says about it, apply `reconcile`'s decision.

The decision (what the commits mean) is pure, in jobs/decisions/reconcile.py; this module runs
the git queries and writes the decision into the record.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobs.basics.errors import StepwiseError
from jobs.decisions.reconcile import (
    Adopt,
    BaseMergeFound,
    BranchDecision,
    BranchFacts,
    NoteFound,
    SyncKind,
    explain_commits,
    is_base_merge,
    reconcile,
)
from jobs.engine.context import JobContext
from jobs.engine.human_commits import record_human_commits
from jobs.kernel import trailers
from jobs.kernel.job import Job
from jobs.kernel.model import Acceptance, BatchStatus, Gate
from jobs.kernel.records import BaseMerge
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
    return BranchFacts(head=head, commits=tuple(commits))


def without_base_commits(repo: Workspace, job: Job, head: str,
                         commits: Sequence[Commit]) -> list[Commit]:
    """Leave out the base's own commits that a merge of the base (ours or a maintainer's)
    brought onto the branch: they are not the branch's work (our own commits always stay)."""
    merged = [parent for c in commits if is_base_merge(job.id, c) for parent in c.parents[1:]]
    base = repo.branch_head(job.base_branch) if job.base_branch != "HEAD" else None
    exclude = [*merged, *([base] if base else [])]
    if not exclude:
        return list(commits)
    kept = {c.sha for c in repo.commits(job.head_sha, head, exclude=exclude)}
    return [c for c in commits if c.sha in kept or c.trailers.get(trailers.JOB) == job.id]


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
        if isinstance(meaning, BaseMergeFound):
            if all(merge.commit != meaning.sha for merge in job.base_merges):
                job.base_merges.append(BaseMerge(base_sha=meaning.base_sha, commit=meaning.sha,
                                                 at=engine.now(), found=True))
                engine.event("base_merge", f"merge of the base {meaning.base_sha[:7]} found "
                             f"on the branch as {meaning.sha[:7]}")
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
    return list(explain_commits(job, facts.commits)[1])


def adopt_only(engine: JobContext) -> None:
    """Record our own commits that reached the branch, without opening gates (used when ending)."""
    try:
        sync(engine, open_gates=False)
    except StepwiseError:
        return
