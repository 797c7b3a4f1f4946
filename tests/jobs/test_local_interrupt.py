"""Ctrl-C in local mode, with the real CLI: `run` interrupted while it validates says where the
job stands and how to resume it, exits 130, and `approve` resumes the interrupted job."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from jobs.kernel.model import Gate, JobStatus
from tests.kit.local_e2e import STEPWISE, build_sample, cli, config_text, load_job, write_issue
from tests.kit.repos import commit_all, validation_wrote

# Blocks until a deadline written beside it: the first run is interrupted while it waits, the
# resumed one waits out the rest and passes.
CHECK = '''from pathlib import Path
import time

Path("validation-started").write_text("yes")
time.sleep(max(0.0, float(Path("tools/deadline").read_text()) - time.time()))
'''


@pytest.mark.slow  # it waits out a deadline of several seconds
def test_ctrl_c_says_where_the_job_stands_and_approve_resumes_it(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(validate=["python tools/check.py"]))
    (repo / "tools").mkdir()
    (repo / "tools/check.py").write_text(CHECK)
    (repo / "tools/deadline").write_text(str(time.time() + 15))
    commit_all(repo, "a check that waits")
    issue = write_issue(tmp_path / "issue.md")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    first = subprocess.Popen([str(STEPWISE), "run", "--repo", str(repo), "--issue", str(issue)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    worktree = repo / ".git/stepwise/worktrees/issue-1"
    deadline = time.monotonic() + 60
    while not validation_wrote(worktree, "validation-started"):
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the validation never started"
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)  # what Ctrl-C sends to the foreground process
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 130, out
    words = " ".join(out.split())
    assert "Interrupted (Ctrl-C): job #1 stopped; it was planning (no batch had started)" in words
    assert out.splitlines()[0].endswith("Resume it with")  # each command on a line of its own
    assert f"  stepwise run --repo {repo} --issue {issue} --number 1" in out.splitlines()
    assert f"  stepwise approve --repo {repo} --number 1" in out.splitlines()
    assert load_job(repo, 1).status is JobStatus.INTERRUPTED

    resumed = cli("approve", "--repo", repo)  # the only live job, interrupted: resumed
    assert resumed.code == 3, resumed.text
    assert "resuming the interrupted job" in resumed.out
    # Where it resumed, from the record (issue 41.5): planning, never "the final review".
    assert ("Resumed at planning (the plan and its baseline were not finished) after an "
            "interruption; no batch is committed yet.") in " ".join(resumed.out.split())
    assert "final review" not in resumed.out
    job = load_job(repo, 1)
    assert job.gate is not None and job.gate.kind is Gate.PLAN and job.baseline_ok is True
