"""Split batches in local mode, on real repositories (tests/kit/bisect_repos.py): a planted
culprit in a batch of 6, an interaction of two files, the good files committed without a
human, the culprit alone at its `failure` gate, and a crash in the middle of a bisection.
Validation really runs (`python -m unittest`, sandboxed when bubblewrap is there)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from jobs.adapters.workspace import Repository
from jobs.basics import markdown_safe as md
from jobs.features.bisect.record import bisect_of
from jobs.kernel.gates import Verb
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.local import LocalSession
from jobs.notes.change_note import render_note
from jobs.ports import Publication
from tests.kit import f401_repos
from tests.kit.bisect_repos import (
    NUMBER,
    VALIDATE_PYTEST,
    CountingSandbox,
    Killed,
    build,
    module_path,
    rename_issue,
)
from tests.kit.local_e2e import Recorder

ALL_SIX = [module_path(i) for i in range(6)]


def start(repo: Path, sandbox: CountingSandbox) -> tuple[LocalSession, Recorder]:
    sink = Recorder()
    session = LocalSession(repo, NUMBER, sink=sink, sandbox=sandbox)  # type: ignore[arg-type]
    return session, sink


def run(repo: Path, sandbox: CountingSandbox, **spec: object) -> tuple[Job, Recorder, int]:
    session, sink = start(repo, sandbox)
    outcome = session.run(rename_issue(**spec), yes=True)
    job = session.store.load(NUMBER)
    assert job is not None
    return job, sink, outcome.exit_code


def branch_file(repo: Path, job: Job, path: str) -> str:
    text = Repository(repo).show_file(job.head_sha, path)
    assert text is not None
    return text


def test_a_culprit_in_a_batch_of_six_is_set_aside_and_the_rest_committed(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 6, culprits=[3])
    sandbox = CountingSandbox()
    job, sink, code = run(repo, sandbox)

    assert code == 4 and job.status is JobStatus.AWAITING_HUMAN
    first, culprit = job.batches
    assert first.status is BatchStatus.COMPLETED
    assert first.files == [f for f in ALL_SIX if f != module_path(3)]
    assert culprit.number == 2 and culprit.files == [module_path(3)]
    assert bisect_of(culprit).split_from == 1 and bisect_of(culprit).split_kind == "culprit"
    # The culprit alone at its gate, with its own evidence; not retried.
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == 2
    assert "set aside from batch 1" in job.gate.reason
    assert job.gate.report is not None and "test_mod_03" in str(job.gate.report.evidence)
    assert len(culprit.attempts) == 1
    # One commit of the five good files, its trailers naming the split.
    commit = Repository(repo).commits(job.base_sha, job.head_sha)
    batch_commits = [c for c in commit if "Stepwise-Batch" in c.trailers]
    assert len(batch_commits) == 1
    assert batch_commits[0].trailers["Stepwise-Split"] == module_path(3)
    assert batch_commits[0].trailers["Stepwise-Batch"] == "1"
    for path in first.files:
        assert "NEW_NAME" in branch_file(repo, job, path)
    assert "OLD_NAME" in branch_file(repo, job, module_path(3))
    # baseline + the whole batch once + its failing tests on the batch and on the parent (the
    # edit's: jobs/decisions/blame.py) + the bisection + the culprit alone: within 2·log2(6)
    state = bisect_of(first).split
    assert state is not None and state.finished and not state.gave_up
    assert len(state.results) - 1 <= 6  # 2·log2(6) ≈ 5.2 extra runs for the one culprit
    assert sandbox.validations == 1 + 2 + len(state.results) + 1
    # Each subset's notice names its files: two that fail never read the same.
    notices = [n for n in sink.texts(Publication.NOTICE) if n.startswith("batch 1 split: ")]
    assert len(notices) == len(set(notices)) == len(state.results) - 1
    assert f"batch 1 split: {md.text(module_path(3))} (1 of 6 files) failed (`python -m " \
        "unittest discover -s tests -q`)" in notices
    # The card says the batch was split and why; the culprit's line says where it came from.
    card = sink.texts(Publication.PROGRESS)[-1]
    assert "split after" in card and "set aside as batch 2" in card
    assert "set aside from batch 1" in card


def test_an_interaction_of_two_files_is_set_aside_together(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 6, pairs=[(1, 4)])
    job, _, code = run(repo, CountingSandbox())

    assert code == 4
    first, pair = job.batches
    assert pair.files == [module_path(1), module_path(4)]
    assert bisect_of(pair).split_kind == "interaction"
    assert first.status is BatchStatus.COMPLETED
    assert first.files == [module_path(i) for i in (0, 2, 3, 5)]
    assert job.gate is not None and job.gate.batch == 2
    assert "pass alone and fail validation together" in job.gate.reason


def test_an_interaction_of_three_files_is_set_aside_with_all_three(tmp_path: Path) -> None:
    """Three files of a batch of 8 fail only when all three are edited: the three (and no
    innocent file) wait together at one gate that names each of them."""
    repo = build(tmp_path / "repo", 8, pairs=[(0, 3, 6)], batch_size=8)
    sandbox = CountingSandbox()
    job, _, code = run(repo, sandbox)

    assert code == 4
    first, together = job.batches
    three = [module_path(i) for i in (0, 3, 6)]
    assert together.files == three and bisect_of(together).split_kind == "interaction"
    assert first.status is BatchStatus.COMPLETED
    assert first.files == [module_path(i) for i in (1, 2, 4, 5, 7)]
    assert job.gate is not None and job.gate.batch == 2
    assert all(f"`{path}`" in job.gate.reason for path in three)
    assert "pass alone and fail validation together" in job.gate.reason
    state = bisect_of(first).split
    assert state is not None
    # rules.py `_fewest`: 2·m·log2(k/m) + 2·m for m = 3 of k = 8, plus the confirmation and
    # the rest validated for the commit
    assert len(state.results) - 1 <= 2 * 3 * math.log2(8 / 3) + 2 * 3 + 2


def test_every_good_file_is_committed_before_the_first_gate(tmp_path: Path) -> None:
    """Two batches of 6 with a culprit each: all 10 good files are committed without a
    human, and the culprits wait at the end, one gate each."""
    repo = build(tmp_path / "repo", 12, culprits=[2, 9])
    job, _, code = run(repo, CountingSandbox())

    assert code == 4
    planned = [b for b in job.batches if bisect_of(b).split_from is None]
    assert [b.status for b in planned] == [BatchStatus.COMPLETED] * 2
    assert sum(len(b.files) for b in planned) == 10
    assert [(b.number, b.files) for b in job.batches if bisect_of(b).split_from] == \
        [(3, [module_path(2)]), (4, [module_path(9)])]
    assert job.gate is not None and job.gate.batch == 3
    # `skip` at the culprit's gate goes on to the next culprit's gate; the numbers hold.
    session, _ = start(repo, CountingSandbox())
    session.verb(Verb.SKIP, reason="the old name is load-bearing here")
    skipped = session.store.load(NUMBER)
    assert skipped is not None and skipped.gate is not None and skipped.gate.batch == 4
    assert skipped.batch(3).status is BatchStatus.SKIPPED


def test_a_crash_in_the_middle_resumes_without_validating_decided_halves(
        tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 6, culprits=[4])
    # baseline, the whole batch, its re-runs on the batch and the parent, one half, then killed
    broken = CountingSandbox(break_at=6)
    with pytest.raises(Killed):
        run(repo, broken)
    job = LocalSession(repo, NUMBER, sink=Recorder()).store.load(NUMBER)
    assert job is not None and bisect_of(job.batches[0]).split is not None
    decided = len(bisect_of(job.batches[0]).split.results)
    assert decided == 2  # the whole batch and one half are in the record

    resumed = CountingSandbox()
    job, _, code = run(repo, resumed)
    assert code == 4 and job.batches[0].status is BatchStatus.COMPLETED
    state = bisect_of(job.batches[0]).split
    assert state is not None and job.batches[1].files == [module_path(4)]
    # After the resume: only the subsets not decided before (the killed one among them), and
    # the culprit's own batch; no subset validated twice.
    assert resumed.validations == len(state.results) - decided + 1
    seen = [tuple(sorted(r.files)) for r in state.results]
    assert len(seen) == len(set(seen))


def test_batch_size_auto_grows_while_batches_pass_and_shrinks_after_a_split(
        tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 12, culprits=[3], batch_size="auto", batch_size_max=8)
    job, sink, code = run(repo, CountingSandbox())

    assert code == 4
    planned = [b for b in job.batches if bisect_of(b).split_from is None]
    # 2 passes, 4 is split (module 3 set aside), then 2 again and 4 for the last 4 files.
    assert [bisect_of(b).auto_size for b in planned] == [2, 4, 2, 4]
    assert [b.number for b in job.batches] == [1, 2, 3, 4, 5]
    assert job.batch(5).files == [module_path(3)] and bisect_of(job.batch(5)).split_from == 2
    assert job.gate is not None and job.gate.batch == 5
    assert "batch size auto" in sink.texts(Publication.PLAN)[-1]
    assert "Batch sizes chosen (auto): 2, 4, 2, 4" in sink.texts(Publication.PROGRESS)[-1]


def test_the_dateutil_shaped_job_sets_aside_only_the_re_export(tmp_path: Path) -> None:
    """bench/bisect.py's stand-in for dateutil's pyupgrade + F401 job: removing the one
    re-export breaks exactly tests/test_imports.py; the split commits the other four files of
    its batch and sets aside only that file, whose evidence names that test module."""
    repo = f401_repos.build(tmp_path / "repo")
    sandbox = CountingSandbox()
    session = LocalSession(repo, f401_repos.NUMBER, sink=Recorder(),
                           sandbox=sandbox)  # type: ignore[arg-type]
    outcome = session.run(f401_repos.f401_issue(), yes=True)
    job = session.store.load(f401_repos.NUMBER)
    assert job is not None and outcome.exit_code == 4
    split = next(b for b in job.batches if bisect_of(b).split is not None)
    assert bisect_of(split).split is not None and len(bisect_of(split).split.files) == 5
    # 5 files (more than 4): halves, every part whole (unittest names no failing tests):
    # [2 | 3], then [1 | 2], then [1 | 1], then the four good files to be committed
    assert not bisect_of(split).split.alone and len(bisect_of(split).split.results) - 1 == 7
    assert not any(r.focus for r in bisect_of(split).split.results)
    # baseline, 4 batches, the failure check's 2 re-runs, the split's 7, the culprit alone
    assert sandbox.validations == 1 + 4 + 2 + 7 + 1
    assert split.status is BatchStatus.COMPLETED and len(split.files) == 4
    [alone] = [b for b in job.batches if bisect_of(b).split_from is not None]
    assert alone.files == [f401_repos.CULPRIT] and job.gate is not None
    assert job.gate.batch == alone.number and job.gate.report is not None
    evidence = str(job.gate.report.evidence)
    assert "test_imports" in evidence and "test_tz" not in evidence
    planned = [b for b in job.batches if bisect_of(b).split_from is None]
    assert all(b.status is BatchStatus.COMPLETED for b in planned)
    assert sum(len(b.files) for b in planned) == len(f401_repos.MODULES) - 1


def test_a_batch_of_three_tries_each_file_on_its_failing_test_then_runs_the_rest_whole(
        tmp_path: Path) -> None:
    """pytest names the failing test, which takes far less than the whole suite (4 s): the files
    are validated alone on that test only up to the culprit, and the whole suite runs once
    more, on the two files committed."""
    repo = build(tmp_path / "repo", 3, culprits=[1], slow_s=4, batch_size=3,
                 validate=[VALIDATE_PYTEST])
    sandbox = CountingSandbox()
    job, sink, code = run(repo, sandbox)

    assert code == 4
    first, culprit = job.batches
    assert first.status is BatchStatus.COMPLETED
    assert first.files == [module_path(0), module_path(2)]
    assert culprit.files == [module_path(1)] and bisect_of(culprit).split_kind == "culprit"
    state = bisect_of(first).split
    assert state is not None and state.alone
    test_id = "tests/test_modules.py::ModuleTests::test_mod_01_keeps_its_old_name"
    assert [(r.files, r.passed, r.focus[-1:]) for r in state.results] == [
        (ALL_SIX[:3], False, []),
        ([module_path(0)], True, [test_id]),
        ([module_path(1)], False, [test_id]),
        ([module_path(0), module_path(2)], True, []),  # whole: the tree committed
    ]
    # baseline, the batch, its failing test on the batch and the parent (blame.py), 2 files
    # alone on it, the two good files whole, the culprit's own batch on its failing test only
    # (it fails there: no whole run), whose evidence names the command that ran
    assert (sandbox.validations, sandbox.focused) == (8, 5)
    assert [c.argv[-1] for c in culprit.attempts[-1].commands] == [test_id]
    assert job.gate is not None and job.gate.batch == 2 and job.gate.report is not None
    assert test_id in str(job.gate.report.evidence)
    assert "each of the 3 files alone, on the 1 failing test first" in state.how
    note = render_note(job, now=job.updated_at)
    assert "4 subsets validated, 3 validations (2 on the failing tests only, 1 whole) for 1 " \
        "cause: 3.0 a cause" in note
    assert f"batch 1 split: {md.text(module_path(1))} (1 of 3 files) failed (`python -m " \
        "pytest" in " ".join(sink.texts(Publication.NOTICE))
