"""What the job branch's commits mean for the record: a pure decision, applied by the engine.

`reconcile(job, facts)` reads the commits found on the branch since the recorded head and says
what they mean: batch K committed at sha S (ours, adopted), a revert of batch K (ours or a
human's), our change note, a feature's commit (our merge of the base branch; never a batch), somebody else's
work, or a rewritten history. The engine gathers the
facts with git and applies the decision (jobs/engine/branch_sync.py); nothing here runs git.

Trailers are public and anyone who may push can write them: a commit is ours only when it is
Stepwise's own (`facts.own`: its identity, and in server mode GitHub's signature as the App)
and its tree is the one the record holds for it, recorded before it landed (the batch's
validated tree, or one of `job.landing_trees` for a note, revert or base merge). Anything else
carrying our trailers is somebody else's commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from jobs.basics.errors import RetryClass, StepwiseError
from jobs.kernel.feature_parts import commit_kinds, landed_commits
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from jobs.kernel.trailers import BASE_MERGE, BATCH, JOB, NOTE, REVERT


class BranchCommit(Protocol):
    """A commit as reconciliation needs it (the workspace's CommitInfo is one)."""

    @property
    def sha(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def trailers(self) -> Mapping[str, str]: ...
    @property
    def reverted_sha(self) -> str | None: ...
    @property
    def tree(self) -> str: ...


@dataclass(frozen=True)
class BranchFacts:
    """What git says about the branch: its head (None: deleted), whether it descends from the
    recorded head, the commits since it (oldest first), which of them Stepwise made (`own`),
    and, after a rewrite, the recorded batch commits that are no longer on it."""

    head: str | None
    descends: bool = True
    commits: Sequence[BranchCommit] = ()
    lost_commits: frozenset[str] = frozenset()
    own: frozenset[str] = frozenset()


class SyncKind(StrEnum):
    UNCHANGED = "unchanged"  # the branch is where the record says
    ADVANCE = "advance"  # only our own (or explained) commits: take the new head
    HUMAN_COMMIT = "human_commit"  # someone else's commits, or a rewrite: ask a human
    FORGET = "forget"  # an accepted rewrite: batches whose commit is gone are redone


@dataclass(frozen=True)
class Adopt:
    """Batch `batch` was found committed as `sha` (e.g. by a worker that died before saving)."""

    batch: int
    sha: str


@dataclass(frozen=True)
class Reverted:
    batch: int
    sha: str
    reason: str


@dataclass(frozen=True)
class NoteFound:
    sha: str


@dataclass(frozen=True)
class CommitFound:
    """A commit a feature landed (jobs/kernel/feature_parts.py `CommitKind`: base_moves' merge
    of the base), told by its trailer; never a batch: not counted, adopted or reverted."""

    sha: str
    trailer: str
    value: str  # the trailer's value (the base commit merged)


Meaning = Adopt | Reverted | NoteFound | CommitFound



def is_base_merge(job: Job, commit: BranchCommit) -> bool:
    """Whether `commit` carries `job`'s base-merge trailers and a tree recorded for one (any
    tree in a record from before trees were recorded)."""
    return commit.trailers.get(JOB) == job.id and BASE_MERGE in commit.trailers and \
        (commit.tree in job.landing_trees or not job.trees_recorded)


def ours(job: Job, commit: BranchCommit, own: frozenset[str]) -> bool:
    """Whether `commit` is one Stepwise landed for `job`: its trailers, made by Stepwise, and
    a tree the record holds for such a commit."""
    trailers = commit.trailers
    if trailers.get(JOB) != job.id or commit.sha not in own:
        return False
    features = {kind.trailer for kind in commit_kinds()}
    if BATCH in trailers and not trailers.keys() & features:
        number = trailers[BATCH]
        batch = next((b for b in job.batches if str(b.number) == number), None)
        if batch is None:
            return False
        return commit.tree == batch.tree if batch.tree else not job.trees_recorded
    return bool(trailers.keys() & {*features, REVERT, NOTE}) and \
        (commit.tree in job.landing_trees or not job.trees_recorded)


@dataclass(frozen=True)
class BranchDecision:
    kind: SyncKind
    head: str | None = None  # the head to record (ADVANCE, FORGET)
    meanings: tuple[Meaning, ...] = ()  # applied in order, in every kind
    foreign: tuple[str, ...] = ()  # "abc1234 'subject'" of each commit that is not ours
    gate_reason: str = ""  # HUMAN_COMMIT: why the gate opens
    forget: tuple[int, ...] = field(default=())  # FORGET: batches to do again


def branch_deleted(job: Job) -> StepwiseError:
    return StepwiseError(
        f"the job branch `{job.branch}` no longer exists",
        hint="cancel the job and start it again", code="branch_deleted",
        retry_class=RetryClass.DO_NOT_RETRY,
    )


def describe(commit: BranchCommit) -> str:
    return f"{commit.sha[:7]} {commit.subject!r}"


def reconcile(job: Job, facts: BranchFacts, *, accept: bool = False,
              open_gates: bool = True) -> BranchDecision:
    """What the branch means for `job`. `accept`: a human approved the branch as it is
    (the human_commit gate); `open_gates=False`: only record our own commits (when ending).
    Raises StepwiseError (branch_deleted) when the branch is gone."""
    if facts.head is None:
        raise branch_deleted(job)
    if facts.head == job.head_sha:
        return BranchDecision(SyncKind.UNCHANGED)
    if not facts.descends:
        if accept or not open_gates:
            return BranchDecision(SyncKind.FORGET, head=facts.head, forget=tuple(
                b.number for b in job.batches if b.commit and b.status is not BatchStatus.REVERTED
                and b.commit in facts.lost_commits))
        return BranchDecision(SyncKind.HUMAN_COMMIT, foreign=("its history was rewritten",),
                              gate_reason=f"the history of `{job.branch}` was rewritten "
                              "(the recorded head is no longer on it)")
    meanings, foreign = explain_commits(job, facts.commits, facts.own)
    if foreign and not accept and open_gates:
        listed = ", ".join(foreign[:5])
        return BranchDecision(SyncKind.HUMAN_COMMIT, meanings=meanings, foreign=foreign,
                              gate_reason=f"{len(foreign)} commit(s) by someone else on "
                              f"`{job.branch}`: {listed}")
    return BranchDecision(SyncKind.ADVANCE, head=facts.head, meanings=meanings, foreign=foreign)


def explain_commits(job: Job, commits: Sequence[BranchCommit], own: frozenset[str] = frozenset()
                    ) -> tuple[tuple[Meaning, ...], tuple[str, ...]]:
    """The meanings of our commits (as they apply, in order) and the descriptions of the rest
    (`own`: the commits Stepwise made)."""
    state = {b.number: (b.status, b.commit) for b in job.batches}
    recorded = recorded_commits(job)
    meanings: list[Meaning] = []
    foreign: list[str] = []
    for commit in commits:
        if commit.sha in recorded:  # the record already says what it is
            continue
        meaning = _meaning(job, state, commit, ours(job, commit, own))
        if isinstance(meaning, str):
            foreign.append(meaning)
        elif meaning is not None:
            meanings.append(meaning)
            _simulate(state, meaning)
    return tuple(meanings), tuple(foreign)


State = dict[int, tuple[BatchStatus, str | None]]


def recorded_commits(job: Job) -> frozenset[str]:
    """The commits the record names: batches, reverts, notes and the features' (base merges)."""
    shas = {b.commit for b in job.batches} | {b.revert_commit for b in job.batches} | \
        {job.note_commit} | landed_commits(job)
    return frozenset(sha for sha in shas if sha)


def _meaning(job: Job, state: State, commit: BranchCommit, is_ours: bool
             ) -> Meaning | str | None:
    """The meaning of one commit; None: ours but changes nothing; a string: somebody else's
    (its description)."""
    trailers = commit.trailers
    if is_ours:
        for kind in commit_kinds():  # checked first: a feature's commit is never a batch
            if kind.trailer in trailers:
                return CommitFound(commit.sha, kind.trailer, trailers[kind.trailer])
        if BATCH in trailers:
            number = int(trailers[BATCH])
            status, _ = _batch_state(job, state, number)
            return None if status is BatchStatus.SKIPPED else Adopt(number, commit.sha)
        if REVERT in trailers and trailers[REVERT].isdigit() and \
                any(b.number == int(trailers[REVERT]) for b in job.batches):
            return _revert(job, state, int(trailers[REVERT]), commit.sha,
                           "reverted with {{revert}}")
        if NOTE in trailers:
            return NoteFound(commit.sha)
        return None
    reverted = commit.reverted_sha
    target = _batch_by_commit(state, reverted) if reverted else None
    if target is None:
        return describe(commit)
    return _revert(job, state, target, commit.sha, f"reverted by a human in {commit.sha[:7]}")


def _batch_state(job: Job, state: State, number: int) -> tuple[BatchStatus, str | None]:
    if number not in state:
        job.batch(number)  # raises the StateError naming the missing batch
    return state[number]


def _revert(job: Job, state: State, number: int, sha: str, reason: str) -> Reverted | None:
    status, _ = _batch_state(job, state, number)
    return Reverted(number, sha, reason) if status is BatchStatus.COMPLETED else None


def _batch_by_commit(state: State, sha: str) -> int | None:
    for number, (_, commit) in state.items():
        if commit and (commit == sha or commit.startswith(sha)):
            return number
    return None


def _simulate(state: State, meaning: Meaning) -> None:
    if isinstance(meaning, Adopt):
        state[meaning.batch] = (BatchStatus.COMPLETED, meaning.sha)
    elif isinstance(meaning, Reverted):
        state[meaning.batch] = (BatchStatus.REVERTED, state[meaning.batch][1])
