"""The branch is the shared truth: adopt our commits, notice reverts, stop for anyone else's push."""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobs.adapters.workspace import CommitInfo
from jobs.domain.errors import RetryClass, StepwiseError
from jobs.domain.model import BatchStatus, Gate, Job

if TYPE_CHECKING:
    from jobs.engine.engine import Engine


def sync(engine: Engine, *, open_gates: bool = True) -> bool:
    """Reconcile the record with the branch; True when the record changed or a gate opened."""
    job, repo = engine.job, engine.services.repository
    actual = repo.branch_head(job.branch)
    if actual is None:
        raise StepwiseError(
            f"the job branch `{job.branch}` no longer exists",
            hint="cancel the job and start it again", code="branch_deleted",
            retry_class=RetryClass.DO_NOT_RETRY,
        )
    accept, job.accept_branch_head = job.accept_branch_head, False
    if actual == job.head_sha:
        return False
    if not repo.is_ancestor(job.head_sha, actual):
        if accept or not open_gates:
            _forget_lost_commits(engine, actual)
            return True
        engine.open(Gate.HUMAN_COMMIT, f"the history of `{job.branch}` was rewritten "
                    "(the recorded head is no longer on it)")
        return True
    foreign = [c for c in repo.commits(job.head_sha, actual) if not _explain(engine, c)]
    if foreign and not accept and open_gates:
        listed = ", ".join(f"{c.sha[:7]} {c.subject!r}" for c in foreign[:5])
        engine.open(Gate.HUMAN_COMMIT, f"{len(foreign)} commit(s) by someone else on "
                    f"`{job.branch}`: {listed}")
        return True
    job.head_sha = actual
    engine.save()
    return True


def foreign_commits(engine: Engine) -> list[str]:
    """Descriptions of commits on the branch that are not ours (our own are recorded on the way)."""
    job, repo = engine.job, engine.services.repository
    actual = repo.branch_head(job.branch)
    if actual is None or actual == job.head_sha:
        return []
    if not repo.is_ancestor(job.head_sha, actual):
        return ["its history was rewritten"]
    return [f"{c.sha[:7]} {c.subject!r}" for c in repo.commits(job.head_sha, actual)
            if not _explain(engine, c)]


def adopt_only(engine: Engine) -> None:
    """Record our own commits that reached the branch, without opening gates (used when ending)."""
    try:
        sync(engine, open_gates=False)
    except StepwiseError:
        return


def _batch_by_commit(job: Job, sha: str) -> int | None:
    for batch in job.batches:
        if batch.commit and (batch.commit == sha or batch.commit.startswith(sha)):
            return batch.number
    return None


def _explain(engine: Engine, commit: CommitInfo) -> bool:
    """Apply what `commit` means to the record; False when it is somebody else's work."""
    job = engine.job
    trailers = commit.trailers
    if trailers.get("Stepwise-Job") == job.id:
        if "Stepwise-Batch" in trailers:
            _adopt(engine, int(trailers["Stepwise-Batch"]), commit.sha)
        elif "Stepwise-Revert" in trailers:
            _mark_reverted(engine, int(trailers["Stepwise-Revert"]), commit.sha,
                           "reverted with `stepwise revert`")
        elif "Stepwise-Note" in trailers:
            job.note_commit = commit.sha
        return True
    reverted = commit.reverted_sha
    number = _batch_by_commit(job, reverted) if reverted else None
    if number is not None:
        _mark_reverted(engine, number, commit.sha, f"reverted by a human in {commit.sha[:7]}")
        return True
    return False


def _adopt(engine: Engine, number: int, sha: str) -> None:
    batch = engine.job.batch(number)
    if batch.status in (BatchStatus.COMPLETED, BatchStatus.REVERTED) and batch.commit == sha:
        return
    if batch.status is BatchStatus.SKIPPED:
        return
    if batch.status is not BatchStatus.COMPLETED:
        batch.set_status(BatchStatus.COMPLETED)
    batch.commit, batch.adopted, batch.consecutive_failures = sha, True, 0
    engine.event("adopt", f"batch {number} found committed as {sha[:7]}; adopted", number)


def _mark_reverted(engine: Engine, number: int, sha: str, reason: str) -> None:
    batch = engine.job.batch(number)
    if batch.status is BatchStatus.COMPLETED:
        batch.set_status(BatchStatus.REVERTED)
        batch.reason, batch.revert_commit = reason, sha
        engine.event("revert", f"batch {number} {reason}", number)


def _forget_lost_commits(engine: Engine, actual: str) -> None:
    """After a rewrite was accepted: batches whose commit is gone from the branch are redone
    (a reverted batch stays reverted: its change is off the branch either way)."""
    job, repo = engine.job, engine.services.repository
    for batch in job.batches:
        if batch.commit and batch.status is not BatchStatus.REVERTED and \
                not repo.is_ancestor(batch.commit, actual):
            if batch.status is not BatchStatus.PENDING:
                batch.set_status(BatchStatus.PENDING)
            batch.commit = None
            batch.adopted = False
    job.head_sha = actual
    engine.event("sync", f"continuing on the rewritten branch at {actual[:7]}")
    engine.save()
