"""The real `stepwise` command as a subprocess: exit codes, printed guidance, refusals, bad input."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.kit.local_e2e import (
    NUMBER,
    assert_exit,
    branch_head,
    build_sample,
    cli,
    config_text,
    issue,
    issue_markdown,
    load_job,
    sample_files,
    session,
    show,
    snapshot,
    stepwise_branches,
    write_issue,
)
from tests.kit.repos import git, make_repo

N = str(NUMBER)


def gate_commands(text: str) -> list[str]:
    """The commands a gate prompt tells the user to type, in order (printed without backticks:
    a command ends with its --repo path and --number)."""
    return re.findall(r"(stepwise [a-z]+(?: <[^>]+>)? --repo (?:'[^']*'|[^\s,]+)"
                      r"(?: --number \d+)?)", text)


def run_printed(command: str) -> tuple[int, str]:
    argv = shlex.split(command)
    assert argv[0] == "stepwise"
    done = cli(*argv[1:])
    return done.code, done.text


# -- the whole flow through the CLI ------------------------------------------------------------

def test_cli_gates_exit_codes_and_the_printed_next_command(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "my repo")  # a space: the printed commands quote the path
    issue_file = write_issue(tmp_path / "issue.md")

    first = cli("run", "--repo", repo, "--issue", issue_file, "--number", N)
    assert first.code == 3, first.text
    assert "Plan for #7" in first.out and "3 batches in 2 milestones" in first.out
    assert "Waiting at gate plan" in first.out and "`" not in first.out
    job = load_job(repo)
    assert branch_head(repo, job.branch) == job.base_sha

    # The command printed to continue works exactly as printed (from any directory).
    commands = gate_commands(first.out)
    assert commands and commands[0].startswith("stepwise approve")
    code, text = run_printed(commands[0])
    assert code == 3, text
    assert "Waiting at gate milestone" in text
    assert load_job(repo).gate.kind is Gate.MILESTONE  # type: ignore[union-attr]

    status = cli("status", "--repo", repo, "--number", N)
    assert status.code == 3, status.text
    assert "Stepwise #7" in status.out and "milestone" in status.out

    code, text = run_printed(gate_commands(text)[0])
    assert code == 0, text
    assert "job completed" in text
    assert load_job(repo).status is JobStatus.COMPLETED

    again = cli("run", "--repo", repo, "--issue", issue_file, "--number", N)
    assert again.code == 0, again.text
    status = cli("status", "--repo", repo, "--number", N)
    assert status.code == 0 and "completed" in status.out


# -- 7. cancel ---------------------------------------------------------------------------------

def test_cancel_at_a_gate_exits_5_and_the_note_says_cancelled(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    local = session(repo)
    assert_exit(local.run(issue(), yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # at the milestone gate, two batches committed

    done = cli("cancel", "--repo", repo, "--number", N)
    assert done.code == 5, done.text
    assert "cancelled" in done.out
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED and job.gate is None
    note = show(repo, job.branch, job.note_path)
    assert "status `cancelled`" in note
    assert "## Cancelled" in note and "batches not done: 3" in note

    status = cli("status", "--repo", repo, "--number", N)
    assert status.code == 5, status.text
    assert "Stepwise #7" in status.out and "cancelled" in status.out
    assert "batch 3" in status.out

    again = cli("cancel", "--repo", repo, "--number", N)
    assert again.code == 2 and "already cancelled" in again.err


def test_cancel_at_the_plan_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=False), 3)
    done = cli("cancel", "--repo", repo, "--number", N)
    assert done.code == 5, done.text
    job = load_job(repo)
    assert job.status is JobStatus.CANCELLED
    assert branch_head(repo, job.branch) == job.base_sha  # nothing to note, nothing committed


# -- 6 and 12. refusals change nothing ---------------------------------------------------------

@pytest.fixture(scope="module")
def at_failure_gate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the refusal tests: each checks that it changed nothing."""
    tmp_path = tmp_path_factory.mktemp("failure")
    # One file per batch (a failing batch of several would be split): batch 4 fails.
    repo = build_sample(tmp_path / "repo", broken=True,
                        config=config_text(batches_per_milestone=6, batch_size=1))
    assert_exit(session(repo).run(issue(), yes=True), 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == 4
    assert job.batch(1).status is BatchStatus.COMPLETED
    return repo


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("revert", "4"), "batch 4 is failed, not completed"),
        (("revert", "5"), "batch 5 is pending, not completed"),
        (("revert", "99"), "batch 99 does not exist"),
        (("skip", ""), "`skip` needs a reason"),
        (("skip", "   "), "`skip` needs a reason"),
    ],
)
def test_refused_commands_exit_2_and_change_nothing(
    at_failure_gate: Path, args: tuple[str, ...], message: str
) -> None:
    repo = at_failure_gate
    before = snapshot(repo)
    done = cli(*args, "--repo", repo, "--number", N)
    assert done.code == 2, done.text
    assert message in done.err
    assert "fix:" in done.err
    assert snapshot(repo) == before


def test_failure_gate_prints_the_report_and_the_commands(at_failure_gate: Path) -> None:
    done = cli("status", "--repo", at_failure_gate, "--number", N)
    assert done.code == 4, done.text
    assert "Waiting at gate failure" in done.out
    assert "validation_failed" in done.out and "NameError" in done.out
    # The card is rendered as markdown, so the commands show without their backticks.
    # A replace batch fails the same way again: the gate recommends skip, not retry (issue 26).
    assert re.search(rf"To leave batch 4 out, with the reason:\n *stepwise skip --repo "
                     rf"{re.escape(str(at_failure_gate))} --number {N} REASON\n", done.out), \
        done.out  # each command on a line of its own (issue 41.3)
    assert "A retry would make the same edit and fail the same way" in done.out


def test_approve_and_retry_without_an_open_gate_are_refused(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=True), 0)
    before = snapshot(repo)
    for verb in ("approve", "retry"):
        done = cli(verb, "--repo", repo, "--number", N)
        assert done.code == 2, done.text
        assert f"no open gate to {verb}" in done.err and "stepwise status" in done.err
    assert cli("skip", "because", "--repo", repo, "--number", N).code == 2
    assert snapshot(repo) == before


def test_commands_for_a_job_that_does_not_exist(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    done = cli("approve", "--repo", repo, "--number", "3")
    assert done.code == 2, done.text
    assert "no job for issue #3" in done.err and "stepwise run" in done.err
    assert stepwise_branches(repo) == []


# -- 8. bad input ------------------------------------------------------------------------------

BAD_INPUTS = {
    "no stepwise block": (
        "# Replace old_sum\n\nJust prose, no block.\n", None,
        ["no ```stepwise block", "add a fenced block"],
    ),
    "invalid regex": (
        issue_markdown(find=[r"old_sum\(("]), None,
        ["find[0]", "regular expression"],
    ),
    "unknown config key": (
        None, config_text(batchsize=3),
        ["batchsize", "unknown field", "batch_size"],
    ),
    "validate not allowed": (
        None, config_text(validate=["pytest -q"]),
        ["validate[0]", "add `pytest` to allow_commands"],
    ),
    "recipe llm": (
        issue_markdown(recipe="llm", replace=None, instructions="Port the callers."), None,
        ["recipe `llm` needs a model endpoint", "STEPWISE_LLM_BASE_URL", "--llm-base-url"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_naming_the_fix_and_leaves_nothing(tmp_path: Path, case: str) -> None:
    issue_text, config, expected = BAD_INPUTS[case]
    files = sample_files(config=config) if config is not None else sample_files()
    repo = make_repo(tmp_path / "repo", files)
    issue_file = tmp_path / "issue.md"
    issue_file.write_text(issue_text if issue_text is not None else issue_markdown())
    head = git(repo, "rev-parse", "HEAD")

    done = cli("run", "--repo", repo, "--issue", issue_file, "--number", N)
    assert done.code == 2, done.text
    for fragment in expected:
        assert fragment in done.err, (fragment, done.err)
    assert "fix:" in done.err
    assert list((repo / ".git").glob("stepwise/issue-*.json")) == []
    assert stepwise_branches(repo) == []
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_repo_that_is_not_a_git_repository_exits_2(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    issue_file = write_issue(tmp_path / "issue.md")
    done = cli("run", "--repo", plain, "--issue", issue_file)
    assert done.code == 2, done.text
    assert "not inside a git repository" in done.err
    assert "git init" in done.err and "fix:" in done.err
    assert list(plain.iterdir()) == []

    missing = cli("status", "--repo", tmp_path / "nowhere")
    assert missing.code == 2, missing.text
    assert "is not a directory" in missing.err


def test_missing_issue_file_and_bad_number_exit_2(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    done = cli("run", "--repo", repo, "--issue", tmp_path / "nope.md")
    assert done.code == 2 and "cannot read the issue file" in done.err
    done = cli("status", "--repo", repo, "--number", "-1")
    assert done.code == 2 and "--number" in done.err
    assert stepwise_branches(repo) == []
