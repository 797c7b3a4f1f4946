"""The pure renderers: plan comment, progress card (with gate prompts) and the change note."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.basics.voice import Voice, shell_template
from jobs.kernel.gates import gate_choices, open_gate
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import GATES, BatchStatus, Gate, JobStatus
from jobs.kernel.records import Attempt, CommandEvidence, FinalReview
from jobs.notes.change_note import render_note
from jobs.notes.progress import gate_prompt, render_card, render_plan
from tests.kit.records import T0, make_batch, make_job

NOW = datetime(2024, 5, 18, 12, 0, 0, tzinfo=UTC)
GITHUB_LIMIT = 65_536
SHA1 = "1234567890abcdef1234567890abcdef12345678"
SHA3 = "3333333aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
PYTEST = CommandEvidence(argv=["python", "-m", "pytest", "-q"], exit_code=0, duration_s=1.0)
RUFF = CommandEvidence(argv=["ruff", "check", "."], exit_code=1, duration_s=0.2)


def attempt(*commands: CommandEvidence) -> Attempt:
    return Attempt(number=1, started_at=T0, finished_at=T0 + timedelta(seconds=3),
                   outcome="validated", commands=list(commands))


def rich_job(status: JobStatus = JobStatus.RUNNING) -> Job:
    batches = [
        make_batch(1, 1, files=["src/a.py", "src/b.py"], status=BatchStatus.COMPLETED,
                   commit=SHA1, targets=3, attempts=[attempt(PYTEST, RUFF)],
                   leftovers=["src/b.py:7"], summary="print -> log.info | 3 calls"),
        make_batch(2, 1, files=["src/gen/c.py"], status=BatchStatus.SKIPPED,
                   reason="generated code", targets=1),
        make_batch(3, 2, files=["src/d.py"], status=BatchStatus.REVERTED, commit=SHA3,
                   revert_commit="4" * 40, reason="broke the CLI", targets=2,
                   attempts=[attempt(PYTEST)]),
        make_batch(4, 2, files=["src/e.py", "src/f.py", "src/g.py", "src/h.py"], targets=4),
        make_batch(5, 3, files=["src/weird|name.py", "src/new\nline.py"], status=BatchStatus.FAILED,
                   targets=1, attempts=[attempt(CommandEvidence(
                       argv=["python", "-c", "print('a|b')"], exit_code=2, duration_s=0.1,
                       timed_out=True))]),
    ]
    return make_job(
        batches=batches, status=status, scope_files=[f"src/{c}.py" for c in "abcdefgh"],
        target_count=11, baseline=[PYTEST], baseline_ok=True,
        instructions=["keep log levels"],
        final_review=FinalReview(merged_with_base="9" * 40, commands=[PYTEST], ok=True,
                                 leftovers=["src/z.py:1", "src/b.py:7"], unfinished_batches=[4]),
    )


# --- render_plan ---------------------------------------------------------------------------


def test_plan_shows_scope_targets_milestones_and_not_doing() -> None:
    job = rich_job()
    text = render_plan(job)
    assert text.startswith("## Plan for #7: Replace print with logging")
    assert "`src/**/*.py`" in text
    assert "excluding `src/vendor/**`" in text
    assert r"Find: `\bprint\(`" in text
    assert "Replace with: `log.info(`" in text
    assert "Done when: `no_matches`" in text
    assert "Files in scope: 8; targets: 11 in 10 files" in text
    assert "5 batches in 3 milestones (batch size 5, 4 batches per milestone)" in text
    assert "Validation: `python -m pytest -q`, `ruff check .`" in text
    assert "Branch: `stepwise/issue-7`" in text
    assert "Not doing:\n- refactor unrelated code\n- touch the tests" in text
    for milestone in (1, 2, 3):
        assert f"### Milestone {milestone}" in text
    assert "- batch 1: `src/a.py`, `src/b.py` (3 targets)" in text
    assert "- batch 4: `src/e.py`, `src/f.py`, `src/g.py`, `src/h.py` (4 targets)" in text
    assert text.index("### Milestone 1") < text.index("batch 2:") < text.index("### Milestone 2")


@pytest.mark.parametrize(
    ("baseline", "ok", "expected"),
    [
        ([], None, "Baseline on `aaaaaaa`: not run"),
        ([], True, "Baseline on `aaaaaaa`: no validation commands configured"),
        ([PYTEST], True, "Baseline on `aaaaaaa`: passes (`python -m pytest -q` → exit 0)"),
        ([PYTEST, RUFF], False, "Baseline on `aaaaaaa`: FAILS — batches cannot pass validation "
         "until it is fixed (`python -m pytest -q` → exit 0; `ruff check .` → exit 1)"),
    ],
)
def test_plan_shows_the_baseline_result(baseline: list[CommandEvidence], ok: bool | None,
                                        expected: str) -> None:
    job = make_job(batches=[make_batch(1)], baseline=baseline, baseline_ok=ok)
    assert expected in render_plan(job)


def test_plan_with_nothing_to_do() -> None:
    text = render_plan(make_job())
    assert "Nothing to do: nothing to change: spec field `find` (`\\bprint\\(`) matches " \
        "nothing in the 0 files spec field `paths`" in text
    assert "so the job ends here and nothing was committed." in text
    assert "0 batches in 0 milestones" in text


def test_plan_lists_long_batches_with_a_count() -> None:
    files = [f"src/f{i}.py" for i in range(8)]
    text = render_plan(make_job(batches=[make_batch(1, files=files)]))
    assert "`src/f0.py`, `src/f1.py`, `src/f2.py`, `src/f3.py`, `src/f4.py` and 3 more" in text


# --- gate prompts and render_card ----------------------------------------------------------


def test_card_at_the_plan_gate_says_stepwise_approve() -> None:
    job = make_job(batches=[make_batch(1)], status=JobStatus.PLANNING)
    open_gate(job, Gate.PLAN, reason="the plan is ready", now=T0)
    card = render_card(job)
    assert "Status: `awaiting_human`" in card
    assert "Waiting at gate `plan` (plan-1): the plan is ready" in card
    assert "To start the job: `stepwise approve`" in card
    assert "`stepwise cancel`" in card


def test_card_at_the_failure_gate_of_a_deterministic_recipe_offers_skip_not_retry() -> None:
    job = rich_job()
    report = ErrorInfo(code="validation_failed", retry_class=RetryClass.NEEDS_HUMAN,
                       message="`python -m pytest -q` exited 1", hint="fix the test or skip",
                       evidence={"output_tail": "E   assert 1 == 2\n"})
    open_gate(job, Gate.FAILURE, reason="batch 5 failed 2 times in a row", now=T0, batch=5,
              report=report)
    card = render_card(job)
    assert "To leave batch 5 out, with the reason: `stepwise skip REASON`" in card
    assert "A retry would make the same edit and fail the same way" in card
    assert "`stepwise retry`" not in card and "`stepwise approve`" not in card
    assert "Error `validation_failed` (needs_human): `python -m pytest -q` exited 1" in card
    assert "Hint: fix the test or skip" in card
    assert "Output tail:\n```\nE   assert 1 == 2\n```" in card


@pytest.mark.parametrize("kind", sorted(GATES))  # the built-in gates and the features'
def test_every_gate_prompt_names_its_command(kind: str) -> None:
    job = make_job(batches=[make_batch(1)], status=JobStatus.RUNNING)
    open_gate(job, kind, reason="why", now=T0, batch=1)
    prompt = gate_prompt(job)
    assert job.gate is not None
    choices = gate_choices(job, job.gate)
    assert f"To {choices.meaning}: `stepwise {shell_template(choices.usage)}`" in prompt
    for other in choices.others:
        assert f"`stepwise {shell_template(other)}`" in prompt  # `skip REASON`, never `<reason>`
    assert "<" not in prompt
    on_github = gate_prompt(job, voice=Voice(prefix="/stepwise ", on_github=True))
    for other in choices.others:  # GitHub keeps DESIGN.md's comment forms: `skip <reason>`
        assert f"`/stepwise {other}`" in on_github
    assert on_github.count("`/stepwise ") == 1 + len(choices.others) + choices.why.count("{{")


def test_gate_prompt_without_a_gate_is_empty() -> None:
    assert gate_prompt(make_job()) == ""


def test_card_header_counts_and_error() -> None:
    job = rich_job(JobStatus.FAILED)
    job.error = ErrorInfo(code="push_failed", retry_class=RetryClass.DO_NOT_RETRY,
                          message="remote refused", hint="h")
    card = render_card(job)
    assert card.startswith("**Stepwise #7** — Replace print with logging")
    assert "Status: `failed` · batches 1/5 completed · branch `stepwise/issue-7` at `bbbbbbb`" in card
    assert "Error `push_failed` (do_not_retry): remote refused" in card


def test_card_folds_finished_milestones_while_running() -> None:
    card = render_card(rich_job())
    # milestone 1 (completed + skipped) is folded to its header
    assert "Milestone 1 (1/2 completed)" in card
    assert "batch 1:" not in card
    assert "batch 2:" not in card
    # milestone 2 is not finished (batch 4 pending): all its batches are listed
    assert "Milestone 2 (0/2 completed)" in card
    assert "↺ batch 3: reverted `3333333` — broke the CLI — src/d.py" in card
    assert "· batch 4: pending — src/e.py, src/f.py, src/g.py and 1 more" in card
    assert "✗ batch 5: failed" in card


def test_card_unfolded_on_request_and_when_completed() -> None:
    job = rich_job()
    card = render_card(job, fold_finished=False)
    assert "✓ batch 1: completed `1234567` — src/a.py, src/b.py" in card
    assert "↷ batch 2: skipped — generated code — src/gen/c.py" in card
    for batch in job.batches:
        batch.status = BatchStatus.COMPLETED
    job.status = JobStatus.COMPLETED
    assert "batch 1: completed" in render_card(job)


def many_batches(count: int, *, per_milestone: int, finished: int,
                 status: JobStatus = JobStatus.RUNNING) -> Job:
    batches = [
        Batch(number=n, milestone=(n - 1) // per_milestone + 1,
              files=[f"src/package_{n:04}/module_{k}.py" for k in range(5)],
              status=BatchStatus.COMPLETED if n <= finished else BatchStatus.PENDING,
              commit=f"{n:040x}" if n <= finished else None, targets=3)
        for n in range(1, count + 1)
    ]
    return make_job(batches=batches, status=status)


def test_card_for_thousands_of_batches_stays_under_githubs_limit() -> None:
    job = many_batches(3000, per_milestone=4, finished=2996)
    assert job.milestone_count == 750
    card = render_card(job)
    assert len(card) < GITHUB_LIMIT
    assert "Milestone 750 (0/4 completed)" in card
    assert "batch 3000: pending" in card
    assert "batch 1: completed" not in card


def test_card_for_thousands_of_pending_batches_stays_under_githubs_limit() -> None:
    job = many_batches(3000, per_milestone=4, finished=1)
    assert len(render_card(job)) < GITHUB_LIMIT


def test_card_for_a_completed_job_with_thousands_of_batches_stays_under_githubs_limit() -> None:
    job = many_batches(3000, per_milestone=4, finished=3000, status=JobStatus.COMPLETED)
    assert len(render_card(job)) < GITHUB_LIMIT


def test_plan_for_thousands_of_batches_stays_under_githubs_limit() -> None:
    job = many_batches(3000, per_milestone=4, finished=0)
    assert len(render_plan(job)) < GITHUB_LIMIT


# --- render_note ---------------------------------------------------------------------------


def table_rows(note: str) -> list[str]:
    section = note.split("## Batches\n\n", 1)[1].split("\n\n", 1)[0]
    return section.splitlines()[2:]


def cells(row: str) -> list[str]:
    return re.split(r"(?<!\\)\|", row)[1:-1]


def test_note_contents() -> None:
    job = rich_job()
    note = render_note(job, now=NOW)
    assert note.startswith("# Stepwise change note: Replace print with logging (#7)\n")
    assert "- Job: `7-abc123def456`, status `running`, written 2024-05-18 12:00:00Z" in note
    assert "- Started: 2024-05-17 09:30:05Z on `main` at `aaaaaaa`; branch `stepwise/issue-7`" in note
    assert "paths `src/**/*.py`; excluded `src/vendor/**`" in note
    assert "- Baseline validation on `aaaaaaa`: passes (`python -m pytest -q` → exit 0)" in note
    assert "## Goal\n\nReplace print with logging\n" in note
    assert "## Not doing\n\n- refactor unrelated code\n- touch the tests\n" in note
    assert "## Standing instructions\n\n- keep log levels\n" in note
    assert note.endswith("Undo any batch by reverting its commit (`stepwise revert BATCH`).\n")


def test_note_lists_every_batch_with_files_commit_and_validation() -> None:
    job = rich_job()
    note = render_note(job, now=NOW)
    rows = table_rows(note)
    assert len(rows) == len(job.batches)
    for row, batch in zip(rows, job.batches, strict=True):
        row_cells = [c.strip() for c in cells(row)]
        assert len(row_cells) == 7, row
        assert row_cells[:3] == [str(batch.milestone), str(batch.number), str(batch.status)]
        for name in batch.files:
            assert name.replace("|", "\\|").replace("\n", " ") in row_cells[3]
    first = [c.strip() for c in cells(rows[0])]
    assert first[3] == "src/a.py<br>src/b.py"
    assert first[4] == "print -> log.info \\| 3 calls"
    assert first[5] == "1234567"
    assert SHA1 not in note
    assert first[6] == "`python -m pytest -q` → exit 0; `ruff check .` → exit 1"
    assert [c.strip() for c in cells(rows[1])][4:] == ["—", "—", "—"]
    assert [c.strip() for c in cells(rows[2])][5:] == ["3333333", "`python -m pytest -q` → exit 0"]


def test_note_table_survives_pipes_and_newlines_in_names() -> None:
    note = render_note(rich_job(), now=NOW)
    row = table_rows(note)[4]
    assert "\n" not in row
    row_cells = cells(row)
    assert len(row_cells) == 7
    assert "src/weird\\|name.py" in row_cells[3]
    assert "src/new line.py" in row_cells[3]
    # the command as a shell takes it back (shlex.join), its pipe escaped for the table
    assert "python -c 'print('\"'\"'a\\|b'\"'\"')'" in row_cells[6]
    assert "exit 2 (timed out after" in row_cells[6]
    assert "`command_timeout` in .github/stepwise.yml sets the limit" in row_cells[6]


def test_note_skipped_reverted_leftovers_and_review() -> None:
    note = render_note(rich_job(), now=NOW)
    assert "## Skipped\n\n- batch 2: generated code\n" in note
    assert "## Reverted\n\n- batch 3: broke the CLI\n" in note
    assert "## Final review\n\n- Branch head merged with base `9999999`: passes\n" in note
    assert "- `python -m pytest -q` → exit 0\n- Unfinished batches: 4\n" in note
    # the files reverts undid, by batch, then the targets from the batches and the review,
    # once each, sorted
    assert ("## Leftovers for a human to confirm\n\n"
            "- `src/d.py` — batch 3's change to it was reverted (`4444444`)\n"
            "- `src/b.py:7`\n- `src/z.py:1`\n") in note
    assert "## Cancelled" not in note


def test_note_without_review_leftovers_or_skips() -> None:
    job = make_job(batches=[make_batch(1, status=BatchStatus.COMPLETED, commit=SHA1)])
    note = render_note(job, now=NOW)
    assert "## Final review" not in note
    assert "## Skipped" not in note
    assert "## Reverted" not in note
    assert "## Standing instructions" not in note
    assert "## Leftovers for a human to confirm\n\n- none\n" in note
    job.batch(1).status = BatchStatus.SKIPPED
    job.batch(1).reason = ""
    assert "- batch 1: no reason given" in render_note(job, now=NOW)


def test_note_failed_review() -> None:
    job = rich_job()
    assert job.final_review is not None
    job.final_review.ok = False
    assert "Branch head merged with base `9999999`: does NOT pass" in render_note(job, now=NOW)


def test_note_cancelled_section() -> None:
    job = rich_job(JobStatus.CANCELLED)
    note = render_note(job, now=NOW)
    assert "## Cancelled\n\nThe job was cancelled; batches not done: 4, 5." in note
    everything_done = make_job(status=JobStatus.CANCELLED,
                               batches=[make_batch(1, status=BatchStatus.COMPLETED)])
    assert "batches not done: none." in render_note(everything_done, now=NOW)


def test_note_is_deterministic_for_a_fixed_now() -> None:
    first = render_note(rich_job(), now=NOW)
    assert render_note(rich_job(), now=NOW) == first
    later = render_note(rich_job(), now=NOW + timedelta(hours=1))
    differing = [
        (a, b) for a, b in zip(first.splitlines(), later.splitlines(), strict=True) if a != b
    ]
    assert len(differing) == 1
    assert "written 2024-05-18 13:00:00Z" in differing[0][1]


def test_counts_agree_once_every_batch_is_finished_and_command_plans_show_no_targets() -> None:
    from jobs.notes.progress import batch_counts

    batches = [make_batch(n, status=BatchStatus.COMPLETED, commit=SHA1) for n in (1, 2, 3, 4)]
    batches += [make_batch(n, status=BatchStatus.SKIPPED, reason="nothing to change")
                for n in (5, 6, 7)]
    job = make_job(batches=batches)
    assert batch_counts(job) == "4 batches changed files, 3 had nothing to change"
    assert "Status: `completed` · 4 batches changed files, 3 had nothing to change" in \
        render_card(job.model_copy(update={"status": JobStatus.COMPLETED}))
    working = make_job(batches=[*batches[:2], make_batch(3), batches[4]])
    assert batch_counts(working) == "batches 2/4 completed (1 had nothing to change)"
    base = make_job(batches=[make_batch(1)])
    plan = render_plan(base.model_copy(update={"spec": base.spec.model_copy(update={"find": []})}))
    assert "targets: 0" not in plan
    assert "every file in scope is batched (no `find`, so no targets)" in plan


def test_a_failing_baseline_s_output_is_printed_once_by_plan_and_gate_together() -> None:
    from jobs.engine.baseline import baseline_report

    job = make_job(status=JobStatus.PLANNING)
    job.baseline = [CommandEvidence(argv=["python", "-m", "pytest"], exit_code=1, duration_s=1.0,
                                    output_tail="E   assert the_unique_line\n")]
    job.baseline_ok = False
    open_gate(job, Gate.PLAN, reason="baseline fails", now=T0, report=baseline_report(job))
    shown = render_plan(job) + "\n\n" + gate_prompt(job)
    assert shown.count("the_unique_line") == 1
