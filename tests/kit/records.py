"""Job records to test with: a small job and batch, and a job with every field set."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.inputs.config import load_config
from jobs.inputs.spec import parse_spec
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import Acceptance, BatchStatus, Gate, JobStatus
from jobs.kernel.records import (
    Attempt,
    CommandEvidence,
    Event,
    FinalReview,
    PendingIssue,
    PullRequest,
    ServerState,
)

T0 = datetime(2024, 5, 17, 9, 30, 5, tzinfo=UTC)
SPEC_BLOCK = (
    "recipe: replace\n"
    "paths: ['src/**/*.py']\n"
    "exclude: ['src/vendor/**']\n"
    "find: ['\\bprint\\(']\n"
    "replace: 'log.info('\n"
    "not_doing: ['refactor unrelated code', 'touch the tests']\n"
)


def make_batch(number: int, milestone: int = 1, *, files: list[str] | None = None,
               status: BatchStatus = BatchStatus.PENDING, **extra: object) -> Batch:
    return Batch(number=number, milestone=milestone,
                 files=files if files is not None else [f"src/m{milestone}/b{number}.py"],
                 status=status, **extra)


def make_job(*, batches: list[Batch] | None = None, status: JobStatus = JobStatus.QUEUED,
             number: int = 7, **extra: object) -> Job:
    spec = parse_spec(f"Body\n\n```stepwise\n{SPEC_BLOCK}```\n")
    return Job(
        id=f"{number}-abc123def456", number=number, title="Replace print with logging",
        repo="/tmp/repo", status=status, created_at=T0, updated_at=T0, spec=spec,
        spec_digest=spec.digest(), spec_text=SPEC_BLOCK, config=load_config(None),
        base_branch="main", base_sha="a" * 40, branch=f"stepwise/issue-{number}",
        head_sha="b" * 40, note_path=f"docs/agent-changes/20240517T093005Z-issue-{number}.md",
        batches=batches or [], **extra,
    )


def full_job() -> Job:
    error = ErrorInfo(code="validation_failed", retry_class=RetryClass.NEEDS_HUMAN,
                      message="pytest failed", hint="look at the output",
                      evidence={"exit_code": 1, "output_tail": "E assert 1 == 2"})
    evidence = CommandEvidence(argv=["python", "-m", "pytest", "-q"], exit_code=1, duration_s=2.5,
                               output_tail="1 failed\n", output_lines=40, timed_out=False,
                               isolated=True)
    attempt = Attempt(number=1, started_at=T0, finished_at=T0 + timedelta(seconds=9),
                      outcome="failed", edit_summary="3 replacements", commands=[evidence],
                      lines_added=3, lines_removed=3, remaining_targets=["src/a.py:4"],
                      error=error)
    done = make_batch(1, 1, files=["src/a.py", "src/ü b.py"], status=BatchStatus.COMPLETED,
                      targets=4, attempts=[attempt], commit="c" * 40, adopted=True,
                      summary="logged", file_summaries={"src/a.py": "2 prints"},
                      approved_gates=[Gate.LARGE_CHANGE], leftovers=["src/a.py:9"])
    failed = make_batch(2, 2, status=BatchStatus.FAILED, consecutive_failures=2,
                        attempts=[attempt], reason="")
    skipped = make_batch(3, 2, status=BatchStatus.SKIPPED, reason="generated code")
    return make_job(
        status=JobStatus.AWAITING_HUMAN, batches=[done, failed, skipped],
        approved_digest="d" * 64, approved_milestones=[1], gate_counter=3,
        gate=OpenGate(id="failure-3", kind=Gate.FAILURE, opened_at=T0, reason="failed twice",
                      batch=2, report=error),
        scope_files=["src/a.py", "src/ü b.py", "src/c.py"], target_count=9,
        baseline=[evidence], baseline_ok=False, instructions=["keep log levels"],
        note_commit="e" * 40,
        final_review=FinalReview(merged_with_base="f" * 40, commands=[evidence], ok=False,
                                 leftovers=["src/c.py:1"], unfinished_batches=[2]),
        error=error, events=[Event(at=T0, kind="batch", message="batch 1 committed", batch=1)],
        accepted=[Acceptance.BRANCH_HEAD], pending_issue=PendingIssue(title="New title", body="text"),
        untrusted_spec=True,
        server=ServerState(installation_id=12, comments={"plan": 901, "card": 902},
                           pull=PullRequest(number=40, node_id="PR_x", url="https://x/pull/40"),
                           queue_position=2, interruptions=1, transient_failures=1,
                           retry_scheduled=True, rebuilt=True),
    )


def full_document(job: Job, **bookkeeping: int) -> dict[str, Any]:
    """The job document as the stores wrote it before documents were lean (every field, its
    defaults included): what a record saved by an earlier version holds."""
    doc = job.model_dump(mode="json", exclude={"batches", "events"})
    doc.update(version=job.version + 1, batch_count=len(job.batches), event_count=len(job.events),
               **bookkeeping)
    return doc


def full_event_line(event: Event) -> str:
    """An event line as written before lines were lean."""
    return event.model_dump_json()
