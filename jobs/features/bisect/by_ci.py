"""Splitting a batch that a red CI check failed (`ci.wait: per_batch`), the CI side of
driver.py: the split starts from the withdrawn commit's tree, the files the failing checks'
annotations name are left out of the first candidate (rules.next_step_named_first), and each
subset that passes local validation is pushed as a candidate commit for CI to judge; its
verdict is recorded like a local result, the candidate is withdrawn, and the bisection goes on
(the job holds no worker while CI runs). The passing files are then committed as the batch
(CI runs once more on that commit, as on any batch), each culprit set aside to its own batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from jobs.basics import markdown_safe as md
from jobs.decisions.ci import CiState, CiVerdict
from jobs.engine.context import JobContext
from jobs.features.bisect.record import SplitState, SubsetResult, bisect_of
from jobs.kernel import trailers
from jobs.kernel.job import Batch
from jobs.kernel.model import BatchStatus
from jobs.notes.note_parts import short
from jobs.ports import CiFailure, Publication


class CiCandidates(Protocol):
    """What a split asks of CI, given by the CI feature (jobs/features/ci/wiring.py
    `CANDIDATES`; jobs/composition.py wires it in, so neither feature imports the other)."""

    def begin(self, engine: JobContext, batch: Batch, sha: str) -> bool:
        """Wait for CI on `batch`'s candidate `sha` (the batch waits with it, in CI's own
        status); False when this repository has no CI."""
        ...

    def take_back(self, engine: JobContext, sha: str, batch: Batch) -> bool:
        """End the wait and withdraw the judged commit `sha`; False when the branch moved on
        top of it (the human_commit gate is then open)."""
        ...


def named_files(batch: Batch, failures: Sequence[CiFailure]) -> list[str]:
    """The batch's files that the failing checks' annotations point at, in the batch's order."""
    named = {a.path for failure in failures for a in failure.annotations}
    return [path for path in batch.files if path in named]


def ci_split_state(engine: JobContext, batch: Batch, sha: str,
                   failures: Sequence[CiFailure]) -> SplitState | None:
    """The split of `batch` after its commit `sha` failed CI (withdrawn already); None
    when that commit's tree is not in the repository."""
    tree = engine.services.repository.git("rev-parse", "--verify", "--quiet",
                                          f"{sha}^{{tree}}", check=False).strip()
    if not tree:
        return None
    checks = md.codes(f.check for f in failures) or "a required check"
    reason = f"{checks} failed in CI with all {len(batch.files)} files"
    named = named_files(batch, failures)
    state = SplitState(files=list(batch.files), edited_tree=tree, reason=reason, by_ci=True,
                       named=named if len(named) < len(batch.files) else [])
    state.results.append(SubsetResult(files=list(batch.files), passed=False, tree=tree,
                                      failed_command=f"CI: {checks}"))
    return state


def push_candidate(ci: CiCandidates, engine: JobContext, batch: Batch,
                   result: SubsetResult) -> bool:
    """Push the subset (validated locally) as a candidate commit and wait for CI on it; False
    when this repository turned out to have no CI (the local result then stands)."""
    job, repo = engine.job, engine.services.repository
    state = bisect_of(batch).split
    assert state is not None
    message = (f"Stepwise: CI candidate for batch {batch.number} ({len(result.files)} of "
               f"{len(state.files)} files)\n\nWithdrawn once CI has judged it: it tells which "
               "files of the batch fail CI.\n\n"
               + trailers.trailer_lines((trailers.CANDIDATE, batch.number)))
    local = engine.runner.worktree.commit_tree(result.tree, job.head_sha, message)
    sha = repo.advance_branch(job.branch, local, job.head_sha)
    state.candidate, state.candidate_sha = result, sha
    if not ci.begin(engine, batch, sha):
        repo.withdraw(job.branch, sha, job.head_sha)
        state.candidate, state.candidate_sha = None, ""
        return False
    job.head_sha = sha
    engine.event("split", f"batch {batch.number}: {len(result.files)} of {len(state.files)} "
                 f"files passed locally; waiting for CI on {short(sha)}", batch.number)
    engine.save(touched=[batch.number])
    engine.publish(Publication.NOTICE, f"batch {batch.number} split: {len(result.files)} of "
                   f"{len(state.files)} files pass locally; CI judges them on `{short(sha)}`")
    return True


def is_candidate(batch: Batch, sha: str) -> bool:
    state = bisect_of(batch).split
    return state is not None and state.candidate is not None and state.candidate_sha == sha


def candidate_result(ci: CiCandidates, engine: JobContext, batch: Batch, sha: str,
                     verdict: CiVerdict) -> SubsetResult | None:
    """CI's verdict on the pending candidate as a subset result, the candidate withdrawn
    (None: the branch moved on top of it, and the human_commit gate is open)."""
    state = bisect_of(batch).split
    assert state is not None and state.candidate is not None
    passed = verdict.state is CiState.PASSED
    result = state.candidate.model_copy(update={
        "passed": passed, "failed_command": "" if passed else f"CI: {verdict.progress()}",
        "commands": state.candidate.commands if passed else []})
    state.candidate, state.candidate_sha = None, ""
    batch.set_status(BatchStatus.FAILED)
    if not ci.take_back(engine, sha, batch):
        return None
    return result
