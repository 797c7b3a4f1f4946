"""reconcile(): what the branch's commits mean, decided on plain records (no git, no disk)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from jobs.basics.errors import StepwiseError
from jobs.decisions import reconcile as reconcile_module
from jobs.decisions.reconcile import (
    Adopt,
    NoteFound,
    Reverted,
    SyncKind,
    explain_commits,
    reconcile,
)
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from tests.kit.records import make_batch, make_job

HEAD, NEW = "b" * 40, "c" * 40
TREES = {"Stepwise-Batch": {"1": "1a" * 20, "2": "2a" * 20}}
LANDED = "e" * 40  # a note, revert or base-merge tree recorded before it landed


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str = "a commit"
    trailers: Mapping[str, str] = field(default_factory=dict)
    reverted_sha: str | None = None
    tree: str = "f" * 40
    own: bool = False  # Stepwise made it (its identity; server mode: GitHub signed it)


def ours(sha: str, **trailers: str) -> Commit:
    """Stepwise's own commit, of the tree the record holds for it."""
    tree = TREES["Stepwise-Batch"][trailers["Stepwise-Batch"]] if "Stepwise-Batch" in trailers \
        else LANDED
    return Commit(sha, trailers={"Stepwise-Job": "7-abc123def456", **trailers}, tree=tree,
                  own=True)


def BranchFacts(**given: Any) -> reconcile_module.BranchFacts:
    """The facts with `own` read from the commits, as the engine gathers them."""
    own = frozenset(c.sha for c in given.get("commits", ()) if c.own)
    return reconcile_module.BranchFacts(**given, own=own)


def two_batches(status: BatchStatus = BatchStatus.PENDING, commit: str | None = None) -> Job:
    job = make_job(batches=[make_batch(1, status=status, commit=commit), make_batch(2)])
    for batch in job.batches:
        batch.tree = TREES["Stepwise-Batch"][str(batch.number)]
    job.landing_trees, job.trees_recorded = [LANDED], True
    return job


def test_the_branch_where_the_record_says_changes_nothing() -> None:
    assert reconcile(two_batches(), BranchFacts(head=HEAD)).kind is SyncKind.UNCHANGED


def test_a_deleted_branch_is_an_error_that_is_not_retried() -> None:
    with pytest.raises(StepwiseError) as caught:
        reconcile(two_batches(), BranchFacts(head=None))
    assert caught.value.code == "branch_deleted"


def test_our_batch_commit_is_adopted_and_the_head_taken() -> None:
    decision = reconcile(two_batches(), BranchFacts(head=NEW, commits=[
        ours(NEW, **{"Stepwise-Batch": "1"})]))
    assert decision.kind is SyncKind.ADVANCE and decision.head == NEW
    assert decision.meanings == (Adopt(1, NEW),)


def test_a_batch_already_recorded_at_that_commit_or_skipped_is_not_adopted_again() -> None:
    done = two_batches(status=BatchStatus.COMPLETED, commit=NEW)
    assert reconcile(done, BranchFacts(head=NEW, commits=[
        ours(NEW, **{"Stepwise-Batch": "1"})])).meanings == ()
    skipped = two_batches(status=BatchStatus.SKIPPED)
    assert reconcile(skipped, BranchFacts(head=NEW, commits=[
        ours(NEW, **{"Stepwise-Batch": "1"})])).meanings == ()


def test_a_commit_for_a_batch_the_job_does_not_have_is_somebody_elses() -> None:
    forged = Commit(NEW, trailers={"Stepwise-Job": "7-abc123def456", "Stepwise-Batch": "9"},
                    own=True)
    decision = reconcile(two_batches(), BranchFacts(head=NEW, commits=[forged]))
    assert decision.kind is SyncKind.HUMAN_COMMIT and decision.meanings == ()


# Forged trailers (issue 40): job id and batch number are public; a writer's commit carrying
# them is a human commit unless Stepwise made it and its tree is the one recorded for it.
FORGERIES = {
    "a writer's commit with the batch's trailers": lambda c: replace(c, own=False),
    "Stepwise's identity but another tree": lambda c: replace(c, tree="0" * 40),
    "the validated tree but not Stepwise's commit": lambda c: replace(c, own=False),
    "another job's id": lambda c: replace(c, trailers={**c.trailers,
                                                       "Stepwise-Job": "7-000000000000"}),
}


@pytest.mark.parametrize("kind", ["Stepwise-Batch", "Stepwise-Note", "Stepwise-Revert",
                                  "Stepwise-Base-Merge"])
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_commit_is_a_human_commit(kind: str, forgery: str) -> None:
    job = two_batches(status=BatchStatus.COMPLETED, commit="d" * 40) \
        if kind == "Stepwise-Revert" else two_batches()
    value = {"Stepwise-Base-Merge": "9" * 40}.get(kind, "1")
    forged = FORGERIES[forgery](ours(NEW, **{kind: value}))
    decision = reconcile(job, BranchFacts(head=NEW, commits=[forged]))
    assert decision.kind is SyncKind.HUMAN_COMMIT and decision.meanings == ()
    assert decision.foreign == (f"{NEW[:7]} 'a commit'",)


def old_record() -> Job:
    """A record of the previous release, as it loads: no tree anywhere."""
    job = make_job(batches=[make_batch(1, status=BatchStatus.COMPLETED, commit="d" * 40),
                            make_batch(2)])
    assert not job.trees_recorded and job.batch(2).tree == "" and job.landing_trees == []
    return job


def test_a_record_from_before_trees_were_recorded_adopts_only_stepwises_own_commits() -> None:
    """It resumes as before for what Stepwise made (its identity; in server mode GitHub's
    signature as the App, which no push can copy): a worker that died after landing batch 2
    is adopted; the same trailers on anybody else's commit open the `human_commit` gate."""
    recorded = ours("d" * 40, **{"Stepwise-Batch": "1"})
    found = replace(ours(NEW, **{"Stepwise-Batch": "2"}), tree="0" * 40)
    decision = reconcile(old_record(), BranchFacts(head=NEW, commits=[recorded, found]))
    assert decision.kind is SyncKind.ADVANCE and decision.meanings == (Adopt(2, NEW),)
    forged = replace(found, own=False)
    decision = reconcile(old_record(), BranchFacts(head=NEW, commits=[recorded, forged]))
    assert decision.kind is SyncKind.HUMAN_COMMIT and decision.meanings == ()
    assert decision.foreign == (f"{NEW[:7]} 'a commit'",)


def test_our_revert_marks_a_batch_adopted_earlier_in_the_same_sync() -> None:
    # The adoption is seen by the revert after it: the commits are read in order.
    decision = reconcile(two_batches(), BranchFacts(head=NEW, commits=[
        ours("d" * 40, **{"Stepwise-Batch": "1"}), ours(NEW, **{"Stepwise-Revert": "1"})]))
    assert decision.meanings == (Adopt(1, "d" * 40),
                                 Reverted(1, NEW, "reverted with {{revert}}"))


def test_a_human_revert_of_our_commit_is_explained_not_foreign() -> None:
    job = two_batches(status=BatchStatus.COMPLETED, commit="d" * 40)
    human = Commit(NEW, subject='Revert "batch 1"', reverted_sha="d" * 7)
    decision = reconcile(job, BranchFacts(head=NEW, commits=[human]))
    assert decision.kind is SyncKind.ADVANCE and decision.foreign == ()
    assert decision.meanings == (Reverted(1, NEW, f"reverted by a human in {NEW[:7]}"),)


def test_the_note_commit_is_recorded() -> None:
    decision = reconcile(two_batches(), BranchFacts(head=NEW, commits=[
        ours(NEW, **{"Stepwise-Note": "final"})]))
    assert decision.meanings == (NoteFound(NEW),)


def test_someone_elses_commit_opens_the_human_commit_gate_but_ours_are_still_adopted() -> None:
    decision = reconcile(two_batches(), BranchFacts(head=NEW, commits=[
        ours("d" * 40, **{"Stepwise-Batch": "1"}), Commit(NEW, subject="fix typo")]))
    assert decision.kind is SyncKind.HUMAN_COMMIT and decision.head is None
    assert decision.meanings == (Adopt(1, "d" * 40),)
    assert decision.foreign == (f"{NEW[:7]} 'fix typo'",)
    assert "1 commit(s) by someone else on `stepwise/issue-7`" in decision.gate_reason


def test_an_accepted_branch_or_an_ending_takes_foreign_commits_in() -> None:
    facts = BranchFacts(head=NEW, commits=[Commit(NEW, subject="fix typo")])
    assert reconcile(two_batches(), facts, accept=True).kind is SyncKind.ADVANCE
    assert reconcile(two_batches(), facts, open_gates=False).kind is SyncKind.ADVANCE


def test_a_rewritten_history_asks_a_human() -> None:
    decision = reconcile(two_batches(), BranchFacts(head=NEW, descends=False))
    assert decision.kind is SyncKind.HUMAN_COMMIT
    assert "was rewritten" in decision.gate_reason


def test_an_accepted_rewrite_redoes_the_batches_whose_commit_is_gone_but_not_reverted_ones() -> None:
    job = make_job(batches=[
        make_batch(1, status=BatchStatus.COMPLETED, commit="1" * 40),
        make_batch(2, status=BatchStatus.COMPLETED, commit="2" * 40),
        make_batch(3, status=BatchStatus.REVERTED, commit="3" * 40)])
    facts = BranchFacts(head=NEW, descends=False, lost_commits=frozenset({"2" * 40, "3" * 40}))
    decision = reconcile(job, facts, accept=True)
    assert decision.kind is SyncKind.FORGET and decision.head == NEW
    assert decision.forget == (2,)


def test_explain_commits_alone_lists_the_foreign_ones_without_changing_the_job() -> None:
    job = two_batches()
    meanings, foreign = explain_commits(job, [ours("d" * 40, **{"Stepwise-Batch": "2"}),
                                              Commit(NEW, subject="wip")],
                                        frozenset({"d" * 40}))
    assert meanings == (Adopt(2, "d" * 40),) and foreign == (f"{NEW[:7]} 'wip'",)
    assert job.batch(2).status is BatchStatus.PENDING
