"""Issue 13 on real temporary repositories: what `stepwise` prints and how it tells jobs apart.

Dead jobs show as `interrupted`, a busy job has its own exit code, one number holds one
issue, names print verbatim, `command` notes say what the codemod did, and the small
commands a newcomer reaches for (`jobs --repo`, `--version`, ...) work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from jobs.adapters.sandbox import PlainSandbox
from jobs.basics.errors import BadInputError
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.local import LocalSession
from tests.kit.local_e2e import (
    NUMBER,
    STEPWISE,
    Recorder,
    assert_exit,
    build_sample,
    cli,
    config_text,
    issue,
    load_job,
    session,
    show,
    write_issue,
)
from tests.kit.repos import commit_all, git, validation_wrote

N = str(NUMBER)
BLOCKING_CHECK = '''from pathlib import Path
import time

Path("validation-started").write_text("yes")
time.sleep(3600)  # the program under test: it hangs until killed
'''


def wait_for(worktree: Path, rel: str, process: subprocess.Popen[str],
             timeout: float = 60) -> None:
    """Until the validation running in `worktree` has written `rel`."""
    deadline = time.monotonic() + timeout
    while not validation_wrote(worktree, rel):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{rel} never appeared in {worktree}"
        time.sleep(0.05)


# -- 7. dead jobs, busy jobs, one issue per number ----------------------------------------------

def test_a_busy_job_exits_6_and_a_killed_one_shows_interrupted_with_how_to_resume(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(
        validate=["python tools/check.py"], command_timeout=60))
    (repo / "tools").mkdir()
    (repo / "tools/check.py").write_text(BLOCKING_CHECK)
    commit_all(repo, "a check that hangs")
    issue_file = write_issue(tmp_path / "issue.md")
    first = subprocess.Popen([str(STEPWISE), "run", "--repo", str(repo), "--issue",
                              str(issue_file), "--number", N], start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(repo / f".git/stepwise/worktrees/issue-{N}", "validation-started", first)
        second = cli("run", "--repo", repo, "--issue", issue_file, "--number", N)
        assert second.code == 6, second.text
        assert f"busy: job #{N} is busy: another stepwise process (pid {first.pid})" in second.err
        alive = cli("status", "--repo", repo, "--number", N)
        assert alive.code == 0 and "planning" in alive.out
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    dead = cli("status", "--repo", repo, "--number", N)
    assert dead.code == 4, dead.text
    assert "Status: interrupted" in dead.out
    assert f"job #{N} is interrupted: the process that ran it is gone" in dead.out
    assert f"Resume it with stepwise run --repo {repo} --issue {issue_file} --number {N}" \
        in " ".join(dead.out.split())
    assert load_job(repo).status is JobStatus.INTERRUPTED


def test_run_with_another_issue_file_on_the_same_number_is_refused(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    first = write_issue(tmp_path / "first.md")
    other = write_issue(tmp_path / "other.md", title="Something else entirely")
    assert_exit(session(repo).run_file(first, yes=False), 3)
    before = load_job(repo)
    with pytest.raises(BadInputError) as caught:
        session(repo).run_file(other, yes=False)
    assert f"job #{NUMBER} was started from {first}, not {other}" in caught.value.message
    assert f"--issue {other} --number {NUMBER + 1}" in caught.value.hint
    after = load_job(repo)
    assert (after.title, after.spec_digest, after.version) == \
        (before.title, before.spec_digest, before.version)


def test_run_after_cancel_says_how_to_start_again(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    issue_file = write_issue(tmp_path / "issue.md")
    assert_exit(session(repo).run_file(issue_file, yes=False), 3)
    assert_exit(session(repo).verb(Verb.CANCEL)[1], 5)
    outcome = session(repo).run_file(issue_file, yes=False)
    assert_exit(outcome, 5)
    assert "To start again, give the new job its own number: `stepwise run --repo " \
        f"{repo} --issue {issue_file} --number {NUMBER + 1}`" in outcome.message


# -- 8. the terminal prints names verbatim ------------------------------------------------------

CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    text = path.read_text()
    if "old_sum(" in text:
        path.write_text(text.replace("old_sum(", "new_sum("))
        print(f"{name}:3:5: OS001 old_sum is gone, but check the docstring")
sys.exit(1)  # "fixed some, findings remain"
'''


def command_repo(tmp_path: Path, **config: object) -> Path:
    repo = build_sample(tmp_path / "repo", config=config_text(**config))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    commit_all(repo, "the codemod")
    return repo


def test_paths_print_verbatim_and_the_card_after_approve_shows_the_gate(tmp_path: Path) -> None:
    repo = command_repo(tmp_path)  # 2 files a batch, 2 batches a milestone
    issue_file = write_issue(tmp_path / "issue.md", recipe="command", replace=None, find=None,
                             exclude=None, paths=["calc/alpha/*.py", "calc/beta/*.py"],
                             run="python tools/codemod.py {files}")
    first = cli("run", "--repo", repo, "--issue", issue_file, "--number", N)
    assert first.code == 3, first.text
    assert "calc/alpha/__init__.py" in first.out and "`" not in first.out
    approved = cli("approve", "--repo", repo, "--number", N)
    assert approved.code == 3, approved.text
    assert "batch 1/4 (attempt 1): calc/alpha/__init__.py, calc/alpha/area.py" in approved.out
    assert "`" not in approved.out
    card = approved.out[approved.out.index("Stepwise #7"):]
    assert "Status: awaiting_human" in card and "Waiting at gate milestone" in card
    assert "Status: running" not in card


# -- 9. change notes of `command` jobs ----------------------------------------------------------

# A check that fails once, like a test whose server went away. Its marker must outlive the
# attempt: a sandboxed command can keep nothing between attempts (the worktree is reset, /tmp is
# private), so this one runs unsandboxed and keeps the marker outside the worktree.
FLAKY_CHECK = '''from pathlib import Path
import os
import sys

marker = Path(os.environ["FLAKY_MARKER"])
if "new_sum(" in Path("calc/alpha/area.py").read_text() and not marker.exists():
    marker.write_text("failed once")
    print("ConnectionResetError: the test server went away")
    sys.exit(1)
'''


def test_command_note_lists_changed_files_reports_findings_and_flaky_checks(
        tmp_path: Path) -> None:
    repo = command_repo(tmp_path, batch_size=3, validate=[
        "python tools/flaky.py", "python -m unittest discover -s tests -q"],
        env={"FLAKY_MARKER": str(tmp_path / "flaky-once")})
    (repo / "tools/flaky.py").write_text(FLAKY_CHECK)
    commit_all(repo, "a flaky check")
    spec = issue(recipe="command", replace=None, find=None, exclude=None,
                 paths=["calc/alpha/*.py"], run="python tools/codemod.py {files}")
    unsandboxed = LocalSession(repo, NUMBER, sink=Recorder(), sandbox=PlainSandbox())
    assert_exit(unsandboxed.run(spec, yes=True), 0)
    job = load_job(repo)
    batch = job.batch(1)
    assert batch.files == ["calc/alpha/__init__.py", "calc/alpha/area.py",
                           "calc/alpha/perimeter.py"]
    assert batch.changed_files == ["calc/alpha/area.py", "calc/alpha/perimeter.py"]
    assert batch.leftovers == [  # each with the text of its line
        "calc/alpha/area.py:3 — OS001 old_sum is gone, but check the docstring "
        "(the line: from calc import legacy)",
        "calc/alpha/perimeter.py:3 — OS001 old_sum is gone, but check the docstring "
        "(the line: from calc import legacy)"]
    # The check failed once and passed when run again: flaky, in the same attempt, not counted.
    assert [a.outcome for a in batch.attempts] == ["committed"]
    check = batch.attempts[0].failure_check
    assert check is not None and check.cause == "flaky" and check.tests == []
    assert [(c.display, c.exit_code) for c in check.reruns] == [("python tools/flaky.py", 0)]
    note = show(repo, job.branch, job.note_path)
    row = next(line for line in note.splitlines() if line.startswith("| 1 | 1 |"))
    assert row.split(" | ")[3] == "calc/alpha/area.py<br>calc/alpha/perimeter.py"
    assert "changed 2 files of 3; it reported 2 findings it did not fix (listed as " \
        "leftovers), exit 1" in row
    assert "perimeter.py` exited 1 (" in row  # the exit as it happened, no guess at why
    assert "(exit 1)" not in row
    assert "- `calc/alpha/area.py:3 — OS001 old_sum is gone, but check the docstring (the " \
        "line: from calc import legacy)`" in note
    assert "## Attempts that failed before passing" not in note
    evidence = note.split("\n## Evidence\n\n", 1)[1].split("\n## ", 1)[0].splitlines()
    first = evidence[evidence.index("- Batch 1:"):]
    assert ("  - attempt 1: `python tools/flaky.py` failed, then passed when run again: flaky, "
            "not counted as a failure") in first[1:]


# -- 10. the small commands ---------------------------------------------------------------------

def test_jobs_lists_a_checkouts_jobs_and_status_without_number_names_them(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=False), 3)
    assert_exit(session(repo, 8).run(issue(title="Second job"), yes=False), 3)
    listed = cli("jobs", "--repo", repo)
    assert listed.code == 0, listed.text
    lines = [" ".join(line.split()) for line in listed.out.splitlines()]
    assert any("│ 7 │ Replace the deprecated" in line and "awaiting_human │ plan │ 0/3 completed"
               in line for line in lines), listed.out
    assert any("│ 8 │ Second job" in line for line in lines), listed.out
    assert f"2 local jobs in {repo}" in listed.out

    status = cli("status", "--repo", repo)
    assert status.code == 2
    assert "`stepwise status` needs --number: 2 jobs have not ended" in status.err
    assert "#7 'Replace the deprecated" in status.err and "#8 'Second job'" in status.err
    assert "--number 8" in status.err


def test_version_prints_the_package_version() -> None:
    import importlib.metadata

    done = cli("--version")
    assert done.code == 0
    assert done.out.strip() == f"stepwise {importlib.metadata.version('stepwise-bot')}"


def test_failed_look_ups_leave_no_lock_files(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    for command in (["approve"], ["cancel"], ["status"], ["revert", "1"]):
        done = cli(*command, "--repo", repo, "--number", "99")
        assert done.code == 2, done.text
    assert not list((repo / ".git").glob("stepwise/*.lock"))


def test_large_change_says_the_limit_and_a_timeout_names_command_timeout(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(max_batch_lines=1))
    assert_exit(session(repo).run(issue(), yes=True), 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.LARGE_CHANGE
    assert "max_batch_lines is 1" in job.gate.reason

    slow = build_sample(tmp_path / "slow", config=config_text(
        validate=["python -c 'import time; time.sleep(600)'"], command_timeout=1))
    from jobs.notes.progress import render_plan

    assert_exit(session(slow).run(issue(), yes=False), 3)
    plan = render_plan(load_job(slow))
    assert "(timed out after 1 s; `command_timeout` in .github/stepwise.yml sets the limit)" \
        in plan
    assert git(slow, "status", "--porcelain") == ""
    assert all(b.status is BatchStatus.PENDING for b in load_job(slow).batches)


HANGS_AFTER_THE_EDIT = '''from pathlib import Path
import time

if "new_sum(" in Path("calc/alpha/area.py").read_text():
    time.sleep(600)  # the program under test: the edit makes it hang
'''


def test_a_batch_that_times_out_names_command_timeout_at_the_failure_gate(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(
        validate=["python tools/hang.py"], command_timeout=2, max_failed_attempts=1))
    (repo / "tools").mkdir()
    (repo / "tools/hang.py").write_text(HANGS_AFTER_THE_EDIT)
    commit_all(repo, "a check that hangs after the edit")
    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    assert "`python tools/hang.py` timed out (command_timeout is 2 s in .github/stepwise.yml" \
        in job.gate.reason
    assert "command_timeout is 2 s" in outcome.message
