"""How a running local job is cancelled (jobs/engine/endings.py), end to end: at the next safe
point after a crash, and in the middle of a long validation command with its process group."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, JobStatus
from tests.jobs.engine.recovery_kit import run_until_first_batch
from tests.kit.local_e2e import (
    NUMBER,
    STEPWISE,
    assert_exit,
    batch_commits,
    branch_commits,
    build_sample,
    config_text,
    issue,
    load_job,
    session,
    show,
    write_issue,
)
from tests.kit.waiting import process_running


def test_cancel_while_running_stops_at_the_next_safe_point(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    run_until_first_batch(repo)
    assert load_job(repo).status is JobStatus.RUNNING
    local = session(repo)
    with local.store.lock(NUMBER):  # another process is advancing the job
        message, requested = local.verb(Verb.CANCEL)
    assert "next safe point" in message
    assert_exit(requested, 5)  # accepted: the job will end cancelled (not 1, "failed")
    assert load_job(repo).status is JobStatus.CANCEL_REQUESTED

    outcome = session(repo).run(issue(), yes=True)  # the running process reaches a safe point
    assert_exit(outcome, 5)
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED, BatchStatus.PENDING,
                                               BatchStatus.PENDING]
    commits = branch_commits(repo, job)
    assert [c.trailers.get("Stepwise-Batch") for c in batch_commits(commits)] == ["1"]
    assert commits[-1].trailers.get("Stepwise-Note") == "cancelled"
    assert "## Cancelled" in show(repo, job.branch, job.note_path)


def test_cancel_ends_a_running_validation_with_its_process_group(tmp_path: Path) -> None:
    marker = f"long-validation-{os.getpid()}"
    slow = f"python -c \"import time, sys; time.sleep(120)\" {marker}"
    repo = build_sample(tmp_path / "repo", config=config_text(validate=[slow]))
    issue_file = write_issue(tmp_path / "issue.md")
    env = {**os.environ, "NO_COLOR": "1"}
    # The baseline runs the slow validation too: cancel arrives while it (or a batch) runs.
    runner = subprocess.Popen([str(STEPWISE), "run", "--repo", str(repo), "--issue",
                               str(issue_file), "--number", str(NUMBER), "--yes"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 30
        while not process_running(marker):
            assert time.monotonic() < deadline, "the validation never started"
            time.sleep(0.1)
        cancelled = subprocess.run([str(STEPWISE), "cancel", "--repo", str(repo), "--number",
                                    str(NUMBER)], capture_output=True, text=True, env=env,
                                   timeout=60, check=False)
        assert cancelled.returncode == 5, cancelled.stdout + cancelled.stderr
        started = time.monotonic()
        assert runner.wait(timeout=30) == 5
        assert time.monotonic() - started < 10
    finally:
        runner.kill()
    assert not process_running(marker)
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED
    assert not batch_commits(branch_commits(repo, job))
