"""Local mode's guard and sandbox in the loop, end to end: codemods the guard refuses or that
change nothing, validation isolated from the job state and the user's checkout, and the batch
gates (large_change, scope) answered.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate
from tests.kit.local_e2e import (
    FIND,
    VALIDATE,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    changed_paths,
    config_text,
    issue,
    load_job,
    session,
    show,
)
from tests.kit.repos import git

# -- 11. the guard in the loop -----------------------------------------------------------------

CODEMOD_TOUCHING_TESTS = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
tests = Path("tests/test_calc.py")
tests.write_text(tests.read_text() + "# touched by the codemod\\n")
'''

CODEMOD_NOOP = '''import sys

print("looked at", len(sys.argv) - 1, "files; nothing to do")
'''


def command_job(tmp_path: Path, script: str) -> Path:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(script)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add the codemod")
    return repo


def test_guard_refuses_a_codemod_that_edits_tests(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_TOUCHING_TESTS)
    spec = issue(recipe="command", replace=None, run="python tools/codemod.py {files}",
                 paths=["calc/alpha/*.py"], exclude=None)
    outcome = session(repo).run(spec, yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    report = job.gate.report
    assert report is not None and report.code == "guard_refused"
    assert "tests/test_calc.py: test_edit" in report.evidence["violations"]
    assert "tests/test_calc.py" in report.message and "test_edit" in report.message
    assert "tests/test_calc.py" in outcome.message
    batch = job.batch(job.gate.batch)  # type: ignore[arg-type]
    # A guard refusal would come out the same again: one attempt, then the failure gate.
    assert batch.commit is None and len(batch.attempts) == 1
    assert "not retried" in job.gate.reason
    assert all(a.commands and a.commands[0].argv[:2] == ["python", "tools/codemod.py"]
               for a in batch.attempts)
    assert branch_head(repo, job.branch) == job.base_sha  # never committed


def test_codemod_that_changes_nothing_skips_the_batch(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_NOOP)
    spec = issue(recipe="command", replace=None, find=None, run="python tools/codemod.py {files}",
                 paths=["calc/alpha/*.py"], exclude=None)
    outcome = session(repo).run(spec, yes=True)
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.batches
    for batch in job.batches:
        assert batch.status is BatchStatus.SKIPPED
        assert batch.reason == "nothing to change"
        assert batch.commit is None
        assert "nothing to do" in batch.attempts[-1].commands[0].output_tail
    commits = branch_commits(repo, job)
    assert batch_commits(commits) == []  # never an empty commit
    note = show(repo, job.branch, job.note_path)
    assert "nothing to change" in note


# -- validation really runs in the sandbox -----------------------------------------------------

PEEK = '''"""Fails when the sandbox lets validation see the job state or write to the user's checkout."""
import os
import sys
from pathlib import Path

worktree = Path.cwd()
state_dir = worktree.parent.parent  # <repo>/.git/stepwise/worktrees/issue-N
user_checkout = state_dir.parent.parent
problems = []
if list(state_dir.glob("issue-*.json")):
    problems.append("the progress file is visible")
try:
    (user_checkout / "written-by-validation.txt").write_text("oops")
    problems.append("the user's checkout is writable")
except OSError:
    pass
if any("TOKEN" in key or "SECRET" in key for key in os.environ):
    problems.append("a secret-looking variable reached the command")
print("; ".join(problems) or "isolated")
sys.exit(1 if problems else 0)
'''


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp (the sandbox replaces /tmp with its own, which would hide all)."""
    base = Path("/var/tmp")
    if not os.access(base, os.W_OK):
        pytest.skip("/var/tmp is not writable")
    path = Path(tempfile.mkdtemp(prefix="stepwise-e2e-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap is not installed")
def test_validation_runs_isolated_from_state_and_checkout(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_for_validation")
    repo = build_sample(outside_tmp / "repo",
                        config=config_text(validate=["python tools/peek.py", VALIDATE]))
    (repo / "tools").mkdir()
    (repo / "tools/peek.py").write_text(PEEK)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add the isolation probe")
    outcome = session(repo).run(issue(), yes=True)
    job = load_job(repo)
    probe = job.baseline[0]
    assert probe.isolated and probe.output_tail.strip() == "isolated", probe.output_tail
    assert_exit(outcome, 0)
    assert not (repo / "written-by-validation.txt").exists()
    for batch in job.batches:
        assert [c.exit_code for c in batch.attempts[-1].commands] == [0, 0]


# -- batch gates: large_change and scope -------------------------------------------------------

def test_large_change_gate_approve_commits_and_skip_records_the_reason(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo",
                        config=config_text(max_batch_lines=3, batches_per_milestone=4))
    local = session(repo)
    outcome = local.run(issue(), yes=True)  # --yes never passes a large_change gate
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.LARGE_CHANGE and job.gate.batch == 1
    assert "4 lines" in job.gate.reason
    assert branch_head(repo, job.branch) == job.base_sha
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # batch 1 committed; batch 2 is large too
    assert_exit(local.verb(Verb.SKIP, reason="too big to review today")[1], 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED, BatchStatus.SKIPPED,
                                               BatchStatus.COMPLETED]
    assert job.batch(1).approved_gates == [Gate.LARGE_CHANGE]
    assert [c.trailers["Stepwise-Batch"] for c in batch_commits(branch_commits(repo, job))] \
        == ["1", "3"]
    assert "- batch 2: too big to review today" in show(repo, job.branch, job.note_path)


CODEMOD_WIDER = '''import sys
from pathlib import Path

for name in [*sys.argv[1:], "calc/gamma/stats.py"]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
'''


def test_scope_gate_approve_accepts_the_wider_batch(tmp_path: Path) -> None:
    repo = command_job(tmp_path, CODEMOD_WIDER)
    local = session(repo)
    spec = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    outcome = local.run(spec, yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.SCOPE and job.gate.batch == 1
    assert "calc/gamma/stats.py: outside_batch_in_scope" in outcome.message
    assert branch_head(repo, job.branch) == job.base_sha
    assert_exit(local.verb(Verb.RETRY)[1], 3)  # the same edit: the same gate
    assert_exit(local.verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    first = batch_commits(branch_commits(repo, job))[0]
    assert "calc/gamma/stats.py" in changed_paths(repo, first.sha)
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    assert git(repo, "grep", "-n", "-P", FIND, job.branch, "--", "calc", ":!calc/legacy.py",
               check=False) == ""
