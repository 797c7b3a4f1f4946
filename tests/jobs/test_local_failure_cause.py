"""Whose failure it is, through the real `stepwise run` on real repositories validated by pytest
(jobs/decisions/blame.py): a flaky test (fails once, passes when run again), a test the edit
really breaks, a failure the parent commit shares, and an environment that changed after a
reused baseline; and the baseline key that follows what the commands resolve to (another
virtualenv activated: the baseline runs again instead of being reused)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from jobs.features.bisect.record import bisect_of
from jobs.kernel.model import Gate
from tests.kit.local_e2e import (
    CliResult,
    branch_commits,
    build_sample,
    cli,
    config_text,
    load_job,
    note_commits,
    show,
    write_issue,
)
from tests.kit.repos import commit_all

PYTEST = "python -m pytest -q -p no:cacheprovider"

# Fails the first time it runs on a tree where batch 1 has edited area.py but batch 2 has not
# touched score.py yet, then passes: flaky in batch 1 only (the counter is an untracked file
# of the worktree, which every reset removes).
FLAKY_TEST = '''import pathlib


def test_sometimes():
    edited = "new_sum" in pathlib.Path("calc/alpha/area.py").read_text()
    later = "new_sum" in pathlib.Path("calc/beta/score.py").read_text()
    counter = pathlib.Path("flaky-count")
    if edited and not later and not counter.exists():
        counter.write_text("1")
        raise AssertionError("failed this time")
'''

# Checks a value from a module installed outside the repository (a dependency).
DEPENDENCY_TEST = '''import calc_dependency


def test_dependency_value():
    assert calc_dependency.VALUE == 1
'''


def virtualenv(where: Path, *, with_pytest: bool) -> Path:
    """A virtualenv without pip; with pytest importable through a .pth file naming the site
    packages of the interpreter running the tests. Returns its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    purelib = next((where / "lib").glob("python3*/site-packages"))
    if with_pytest:
        (purelib / "stepwise-test.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def site_packages(venv_bin: Path) -> Path:
    return next((venv_bin.parent / "lib").glob("python3*/site-packages"))


def on_path(venv_bin: Path) -> dict[str, str]:
    return {"PATH": os.pathsep.join([str(venv_bin), os.environ["PATH"]]),
            "VIRTUAL_ENV": str(venv_bin.parent)}


def sample(root: Path, *, extra: dict[str, str] | None = None, broken: bool = False) -> Path:
    repo = build_sample(root, broken=broken, config=config_text(
        validate=[PYTEST], allow_commands=["python"]))
    for path, text in (extra or {}).items():
        (repo / path).write_text(text)
    if extra:
        commit_all(repo, "more tests")
    return repo


def run(repo: Path, number: int, env: dict[str, str], *extra: str) -> CliResult:
    issue = write_issue(repo.parent / f"issue-{number}.md")
    return cli("run", "--repo", repo, "--issue", issue, "--number", str(number), "--yes", *extra,
               env=env)


def read(text: str) -> str:
    """What the terminal shows, as one line: code spans rendered, wrapping undone."""
    return " ".join(text.replace("`", "").split())


def evidence_of(note: str) -> dict[str, list[str]]:
    """The lines under each `- Batch N:` of the note's `## Evidence` section."""
    section = note.split("\n## Evidence\n\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("- Batch "):
            found[line.removeprefix("- Batch ").rstrip(":")] = current = []
        elif line.startswith("  - "):
            current.append(line)
    return found


def final_note(repo: Path, number: int) -> str:
    job = load_job(repo, number)
    commits = note_commits(branch_commits(repo, job))
    assert commits, "no note commit"
    head = commits[-1].sha
    listed = subprocess.run(["git", "-C", str(repo), "diff-tree", "--no-commit-id", "--name-only",
                             "-r", head], capture_output=True, text=True, check=True).stdout
    path = next(line for line in listed.splitlines() if line.startswith("docs/agent-changes/"))
    return show(repo, head, path)


def test_a_flaky_test_is_named_not_counted_and_the_batch_committed(tmp_path: Path) -> None:
    venv = virtualenv(tmp_path / "venv", with_pytest=True)
    repo = sample(tmp_path / "repo", extra={"tests/test_flaky.py": FLAKY_TEST})
    done = run(repo, 1, on_path(venv))
    assert done.code == 0, done.text

    job = load_job(repo, 1)
    first = job.batches[0]
    assert [b.status for b in job.batches] == ["completed"] * len(job.batches)
    assert len(first.attempts) == 1 and first.consecutive_failures == 0
    check = first.attempts[0].failure_check
    assert check is not None and check.cause == "flaky"
    assert check.tests == ["tests/test_flaky.py::test_sometimes"]
    # One extra run, of the failing test only; the parent was not needed.
    assert [(c.argv, c.exit_code) for c in check.reruns] == [
        (["python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
          "tests/test_flaky.py::test_sometimes"], 0)]
    assert all(b.attempts[-1].failure_check is None for b in job.batches[1:])
    evidence = evidence_of(final_note(repo, 1))
    assert ("  - attempt 1: `tests/test_flaky.py::test_sometimes` failed, then passed when run "
            "again: flaky, not counted as a failure") in evidence["1"]
    assert not any("attempt" in line for n in ("2", "3") for line in evidence[n])


def test_a_test_the_edit_breaks_is_the_edits(tmp_path: Path) -> None:
    venv = virtualenv(tmp_path / "venv", with_pytest=True)
    repo = sample(tmp_path / "repo", broken=True)
    done = run(repo, 1, on_path(venv))
    assert done.code == 4, done.text

    job = load_job(repo, 1)
    failed = job.batch(2)  # score.py and total.py: split after the check, total.py set aside
    assert bisect_of(failed).split is not None and bisect_of(failed).split.set_aside == ["calc/beta/total.py"]
    check = failed.attempts[0].failure_check
    assert check is not None and check.cause == "edit"
    assert check.tests == ["tests/test_calc.py::CalcTests::test_total"]
    # Once more on the batch (fails again), once on the parent (passes): the edit's.
    only_it = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "tests/test_calc.py::CalcTests::test_total"]
    assert [(c.argv, c.exit_code) for c in check.reruns] == [(only_it, 1), (only_it, 0)]
    assert check.parent in [c.sha for c in branch_commits(repo, job)]  # batch 1 was before it
    assert "not because of its edit" not in done.text
    assert job.gate is not None and job.gate.kind is Gate.FAILURE


def test_a_failure_the_parent_shares_is_not_the_edits(tmp_path: Path) -> None:
    venv = virtualenv(tmp_path / "venv", with_pytest=True)
    (site_packages(venv) / "calc_dependency.py").write_text("VALUE = 1\n")
    repo = sample(tmp_path / "repo", extra={"tests/test_dependency.py": DEPENDENCY_TEST})
    env = on_path(venv)
    assert run(repo, 1, env, "--yes").code == 0  # records a passing baseline
    # The dependency changes in place: the same programs, the same paths, another value.
    (site_packages(venv) / "calc_dependency.py").write_text("VALUE = 2\n")
    done = run(repo, 2, env)
    assert done.code == 4, done.text

    job = load_job(repo, 2)
    assert job.baseline_from.startswith("issue-1/")
    first = job.batches[0]
    check = first.attempts[0].failure_check
    assert check is not None and check.cause == "pre_existing"
    assert first.consecutive_failures == 0 and len(first.attempts) == 1
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    said = (f"batch 1 failed, but not because of its edit: "
            f"`tests/test_dependency.py::test_dependency_value` fails on the parent commit "
            f"{job.base_sha[:7]} too, without the batch's edit (a pre-existing failure)")
    assert job.gate.reason == said
    assert read(said) in read(done.text)
    assert [bisect_of(b).split for b in job.batches] == [None] * len(job.batches)  # no culprit search
    assert "validating halves" not in done.text and "split:" not in done.text
    # The batch's evidence at the gate names whose failure it was.
    assert read(f"attempt 1: `tests/test_dependency.py::test_dependency_value` fails on the "
                f"parent commit {job.base_sha[:7]} too: a pre-existing failure") in read(done.text)
    # Retried once the cause is fixed; not "a retry would fail the same way".
    assert read("To retry the batch with the attempt counter reset: stepwise retry --repo") \
        in read(done.text)
    assert "would make the same edit" not in done.text


def test_an_environment_that_changed_after_a_reused_baseline_is_not_blamed_on_the_edit(
        tmp_path: Path) -> None:
    venv = virtualenv(tmp_path / "venv", with_pytest=True)
    repo = sample(tmp_path / "repo")
    env = on_path(venv)
    assert run(repo, 1, env).code == 0
    (site_packages(venv) / "stepwise-test.pth").unlink()  # pytest gone from this virtualenv
    done = run(repo, 2, env)
    assert done.code == 4, done.text

    job = load_job(repo, 2)
    reused = job.baseline_from
    assert reused.startswith("issue-1/")
    first = job.batches[0]
    check = first.attempts[0].failure_check
    assert check is not None and check.cause == "environment"
    # No re-run on the batch (a missing module does not come back): only the parent's.
    assert [c.exit_code for c in check.reruns] == [1]
    assert "No module named pytest" in check.reruns[0].output_tail
    said = (f"batch 1 failed, but not because of its edit: the environment changed: "
            f"`{PYTEST}` fails the same way on the parent commit {job.base_sha[:7]}, "
            f"without the batch's edit (the baseline reused from {reused} passed, so it was "
            "run again)")
    assert job.gate is not None and job.gate.reason == said
    assert read(said) in read(done.text)
    assert first.consecutive_failures == 0
    assert all(bisect_of(b).split is None for b in job.batches)
    assert "validating halves" not in done.text and "split:" not in done.text
    # The recorded baseline is dropped: the next job runs it and the plan says it fails.
    third = run(repo, 3, env)
    assert third.code == 3, third.text
    assert load_job(repo, 3).baseline_from == ""
    assert load_job(repo, 3).baseline_ok is False


def test_another_virtualenv_is_another_baseline(tmp_path: Path) -> None:
    with_pytest = virtualenv(tmp_path / "with", with_pytest=True)
    without = virtualenv(tmp_path / "without", with_pytest=False)
    repo = sample(tmp_path / "repo")
    assert run(repo, 1, on_path(with_pytest)).code == 0
    # The same PATH again: the recorded baseline is reused.
    assert run(repo, 2, on_path(with_pytest)).code == 0
    assert load_job(repo, 2).baseline_from.startswith("issue-1/")
    # Another virtualenv activated: the baseline runs again, and fails where it is.
    done = run(repo, 3, on_path(without))
    assert done.code == 3, done.text
    job = load_job(repo, 3)
    assert job.baseline_from == "" and job.baseline_ok is False
    assert "No module named pytest" in job.baseline[0].output_tail
    assert "reused" not in done.text


def test_the_rerun_keeps_pytests_options_and_drops_its_paths() -> None:
    from jobs.decisions.blame import rerun_argv

    argv = ["pytest", "-q", "tests", "-k", "tests", "--tb=short", "-p", "no:cacheprovider"]
    assert rerun_argv(argv, ["tests/a.py::t"]) == [
        "pytest", "-q", "-k", "tests", "--tb=short", "-p", "no:cacheprovider", "tests/a.py::t"]
    assert rerun_argv(["tox", "-e", "py"], ["x"]) == ["tox", "-e", "py"]
    assert rerun_argv(["python", "-m", "pytest", "tests"], []) == [
        "python", "-m", "pytest", "tests"]
