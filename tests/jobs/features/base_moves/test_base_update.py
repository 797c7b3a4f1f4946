"""The base-update decision, the merge renderers, the `conflict` gate and how reconcile reads
our merge commits: pure, on records."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.decisions.reconcile import Adopt, BranchFacts, CommitFound, SyncKind, reconcile
from jobs.features.base_moves.parts import BASE_MERGE, CONFLICT
from jobs.features.base_moves.record import BaseMerge, ReplayedBatch, moves
from jobs.features.base_moves.rules import BaseAction, BaseFacts, Replay, decide_base_update
from jobs.features.base_moves.texts import base_merge_card, base_merge_note, conflict_reason, merge_message
from jobs.inputs.config import load_config
from jobs.inputs.config_errors import InvalidConfigError
from jobs.inputs.spec import Recipe
from jobs.kernel.gates import Verb, apply_verb, open_gate
from jobs.kernel.job import Job
from jobs.kernel.model import GATES, Acceptance, BatchStatus, Gate, JobStatus
from jobs.kernel.records import CommandEvidence
from jobs.kernel.trailers import BASE_MERGE as BASE_MERGE_TRAILER
from tests.kit.records import make_batch, make_job

BASE, MERGE, NEW = "d" * 40, "e" * 40, "c" * 40
T0 = datetime(2024, 5, 17, tzinfo=UTC)


def job_with(policy: str = "conflicted", recipe: Recipe = Recipe.REPLACE) -> Job:
    job = make_job(batches=[
        make_batch(1, files=["src/a.py", "src/b.py"], status=BatchStatus.COMPLETED, commit=NEW),
        make_batch(2, files=["src/c.py"])], status=JobStatus.RUNNING)
    job.config = load_config(f"update_from_base: {policy}\n")
    if recipe is not Recipe.REPLACE:
        job.spec = job.spec.model_copy(update={"recipe": recipe, "replace": None,
                                               "instructions": "use logging"})
    return job


def test_the_policy_key_is_strict() -> None:
    assert load_config(None).update_from_base == "conflicted"
    with pytest.raises(InvalidConfigError) as caught:
        load_config("update_from_base: sometimes\n")
    assert "update_from_base" in caught.value.message and "'behind'" in caught.value.message


@pytest.mark.parametrize(("policy", "strict", "action"), [
    ("conflicted", False, BaseAction.NOTHING), ("conflicted", True, BaseAction.MERGE),
    ("behind", False, BaseAction.MERGE), ("never", True, BaseAction.NOTHING)])
def test_a_clean_merge_follows_the_policy(policy: str, strict: bool, action: BaseAction) -> None:
    decision = decide_base_update(job_with(policy), BaseFacts(BASE, contained=False,
                                                              strict=strict))
    assert decision.action is action and decision.base_sha == BASE


def test_a_contained_or_declined_base_needs_nothing() -> None:
    job = job_with("behind")
    assert decide_base_update(job, BaseFacts(BASE, contained=True)).action is BaseAction.NOTHING
    moves(job).declined = BASE
    declined = decide_base_update(job, BaseFacts(BASE, contained=False))
    assert declined.action is BaseAction.NOTHING and "failed merge" in declined.reason


def test_conflicts_in_a_completed_replace_batch_are_replayed() -> None:
    decision = decide_base_update(job_with(), BaseFacts(BASE, contained=False,
                                                        conflicts=("src/a.py", "src/b.py")))
    assert decision.action is BaseAction.REPLAY
    assert decision.replays == (Replay(1, ("src/a.py", "src/b.py"),
                                       "the base changed src/a.py, src/b.py, which batch 1 "
                                       "edited"),)


@pytest.mark.parametrize(("recipe", "path", "why"), [
    (Recipe.LLM, "src/a.py", "batch 1 is an `llm` batch"),
    (Recipe.REPLACE, "src/c.py", "outside every completed batch"),  # batch 2 is pending
    (Recipe.REPLACE, "README.md", "outside every completed batch")])
def test_conflicts_no_recipe_can_replay_open_the_gate(recipe: Recipe, path: str,
                                                      why: str) -> None:
    decision = decide_base_update(job_with(recipe=recipe), BaseFacts(
        BASE, contained=False, conflicts=("src/b.py", path) if path != "src/a.py" else (path,)))
    assert decision.action is BaseAction.CONFLICT
    assert f"{path} ({why})" in decision.unreplayable


def test_a_file_the_base_deleted_cannot_be_replayed() -> None:
    decision = decide_base_update(job_with(), BaseFacts(
        BASE, contained=False, conflicts=("src/a.py",), absent_at_base=frozenset({"src/a.py"})))
    assert decision.unreplayable == ("src/a.py (the base deleted it)",)


def test_the_merge_message_and_the_conflict_reason() -> None:
    job = job_with()
    decision = decide_base_update(job, BaseFacts(BASE, contained=False,
                                                 conflicts=("src/a.py",)))
    message = merge_message(job, BASE, decision)
    assert message.splitlines()[0] == f"stepwise(#7): merge main ({BASE[:7]})"
    assert message.endswith(f"Stepwise-Job: {job.id}\nStepwise-Base-Merge: {BASE}\n")
    assert "Replayed batch 1" in message
    conflict = decide_base_update(job, BaseFacts(BASE, contained=False, conflicts=("x.py",)))
    reason = conflict_reason(job, conflict, local=False)
    assert "`x.py (outside every completed batch)`" in reason
    assert "git merge origin/main" in reason and "git push origin stepwise/issue-7" in reason
    assert "git merge main" in conflict_reason(job, conflict, local=True)


def test_the_note_and_card_list_each_merge() -> None:
    job = job_with()
    assert base_merge_note(job) == [] and base_merge_card(job) == []
    moves(job).merges = [
        BaseMerge(base_sha=BASE, commit=MERGE, at=T0, replayed=[ReplayedBatch(
            batch=1, files=["src/a.py"], reason="the base changed src/a.py")],
            commands=[CommandEvidence(argv=["pytest"], exit_code=0, duration_s=1.0)]),
        BaseMerge(base_sha=NEW, commit=NEW, at=T0, by="human")]
    note = "\n".join(base_merge_note(job))
    assert "## Base merges" in note and "replayed batch 1 (the base changed src/a.py)" in note
    assert "`pytest` → exit 0" in note and "resolved by a maintainer" in note
    assert "merged 2 time(s)" in "\n".join(base_merge_card(job))
    assert "looked at when" not in "\n".join(base_merge_card(job))
    open_gate(job, Gate.MILESTONE, reason="done", now=T0, milestone=1)
    moves(job).moved_at = T0
    assert "`main` moved at 2024-05-17 00:00Z" in "\n".join(base_merge_card(job))


def test_the_conflict_gate_exits_4_and_approve_accepts_the_branch() -> None:
    job = job_with()
    assert GATES[CONFLICT].exit_code == 4
    open_gate(job, CONFLICT, reason="conflict", now=T0)
    with pytest.raises(Exception, match="does not apply"):
        apply_verb(job, Verb.RETRY)
    apply_verb(job, Verb.APPROVE)
    assert job.status is JobStatus.RUNNING and job.accepted == [Acceptance.BRANCH_HEAD]


def test_approving_a_failed_merge_declines_that_base() -> None:
    job = job_with()
    open_gate(job, Gate.FAILURE, reason="merge failed", now=T0, report=ErrorInfo(
        code="base_merge_failed", retry_class=RetryClass.NEEDS_HUMAN, message="m", hint="h",
        evidence={"base_sha": BASE}), cause=BASE_MERGE)
    apply_verb(job, Verb.APPROVE)
    assert moves(job).declined == BASE


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str = "a commit"
    trailers: dict[str, str] = field(default_factory=dict)
    reverted_sha: str | None = None
    tree: str = "e" * 40


def test_reconcile_reads_our_merge_commit_as_no_batch() -> None:
    job = job_with()
    job.trees_recorded, job.landing_trees = True, ["e" * 40]  # recorded before it landed
    merge = Commit(MERGE, trailers={"Stepwise-Job": job.id, "Stepwise-Base-Merge": BASE,
                                    "Stepwise-Batch": "2"})  # a batch trailer is not believed
    decision = reconcile(job, BranchFacts(head=MERGE, commits=[merge],
                                          own=frozenset({MERGE})))
    assert decision.kind is SyncKind.ADVANCE and decision.foreign == ()
    assert decision.meanings == (CommitFound(MERGE, BASE_MERGE_TRAILER, BASE),)
    assert not any(isinstance(m, Adopt) for m in decision.meanings)
