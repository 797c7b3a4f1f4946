"""Starting the first job without a detour (local mode, the real CLI on real repositories): the
working tree's config, every spec error at once, single strings for lists, `--number` and the
job a command means by default, a plan with nothing to do, and reloading the config at the
plan gate."""

from __future__ import annotations

from pathlib import Path

from jobs.kernel.model import Gate, JobStatus
from tests.kit.local_e2e import (
    VALIDATE,
    build_sample,
    cli,
    config_text,
    issue_markdown,
    load_job,
    state_path,
    stepwise_branches,
    write_issue,
)
from tests.kit.repos import git

FAILING = 'python -c "import sys; sys.exit(3)"'


def test_the_working_tree_config_is_read_and_the_plan_says_so(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    (repo / ".github/stepwise.yml").write_text(config_text(batch_size=6))  # not committed
    done = cli("run", "--repo", repo, "--issue", write_issue(tmp_path / "issue.md"))
    assert done.code == 3, done.text
    assert "Config: .github/stepwise.yml from the working tree" in done.out
    job = load_job(repo, 1)
    assert job.config.batch_size == 6 and job.config_source == "working tree"
    assert len(job.batches) == 1  # six files in one batch: the committed config says 2


def test_every_spec_problem_is_reported_at_once_with_did_you_mean(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    issue = tmp_path / "issue.md"
    issue.write_text(issue_markdown(exlude=["calc/legacy.py"], batchsize=3, replace=7))
    done = cli("run", "--repo", repo, "--issue", issue)
    assert done.code == 2, done.text
    assert "3 problems" in done.err
    for words in ("`exlude`: unknown field", "did you mean `exclude`",
                  "`batchsize`: unknown field", "did you mean `batch_size`",
                  "`replace`: expected a string"):
        assert words in done.err, words
    assert stepwise_branches(repo) == []


def test_single_strings_are_accepted_where_lists_go(tmp_path: Path) -> None:
    config = config_text(validate=VALIDATE, allow_commands="python")
    repo = build_sample(tmp_path / "repo", config=config)
    issue = write_issue(tmp_path / "issue.md", paths="calc/**/*.py", exclude="calc/legacy.py",
                        not_doing="remove old_sum() itself")
    done = cli("run", "--repo", repo, "--issue", issue, "--yes")
    assert done.code == 0, done.text
    job = load_job(repo, 1)
    assert job.spec.paths == ["calc/**/*.py"] and job.spec.not_doing == ["remove old_sum() itself"]
    assert job.config.validate_commands == [VALIDATE] and job.status is JobStatus.COMPLETED


def test_number_defaults_to_the_next_free_one_and_commands_to_the_only_live_job(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    issue = write_issue(tmp_path / "issue.md")
    first = cli("run", "--repo", repo, "--issue", issue)
    assert first.code == 3 and "Plan for #1" in first.out, first.text
    again = cli("run", "--repo", repo, "--issue", issue)  # the same file: the same job
    assert again.code == 3 and load_job(repo, 1).version >= 1, again.text
    assert stepwise_branches(repo) == ["stepwise/issue-1"]

    status = cli("status", "--repo", repo)
    assert status.code == 3 and "Stepwise #1" in status.out, status.text
    other = write_issue(tmp_path / "other.md", title="Another goal")
    second = cli("run", "--repo", repo, "--issue", other)
    assert second.code == 3 and "Plan for #2" in second.out, second.text

    ambiguous = cli("approve", "--repo", repo)
    assert ambiguous.code == 2, ambiguous.text
    assert "`stepwise approve` needs --number: 2 jobs have not ended" in ambiguous.err
    assert "#1 " in ambiguous.err and "#2 'Another goal'" in ambiguous.err
    assert load_job(repo, 1).gate is not None and load_job(repo, 2).gate is not None

    assert cli("cancel", "--repo", repo, "--number", "2").code == 5
    approved = cli("approve", "--repo", repo)  # only #1 is live now
    assert approved.code == 3 and "Waiting at gate milestone" in approved.out, approved.text


def test_a_plan_with_nothing_to_do_is_refused_without_a_baseline(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(validate=[FAILING]))
    issue = write_issue(tmp_path / "issue.md", find=[r"\bno_such_call\("])
    done = cli("run", "--repo", repo, "--issue", issue)
    assert done.code == 2, done.text  # bad input: no job starts (tests/jobs/test_local_truth.py)
    assert "matches nothing in the 10 files" in done.err and "Waiting at gate" not in done.out
    assert not state_path(repo, 1).exists()  # no record, so no baseline either


def test_a_config_fix_is_reloaded_at_the_plan_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(validate=[FAILING]))
    issue = write_issue(tmp_path / "issue.md")
    first = cli("run", "--repo", repo, "--issue", issue)
    assert first.code == 3, first.text
    job = load_job(repo, 1)
    assert job.baseline_ok is False and job.gate is not None and job.gate.report is not None
    assert "approve --reload-config" in job.gate.report.hint
    assert "--reload-config" in first.out  # the gate's hint, as printed

    # Plain approve keeps the frozen config: the baseline still fails, the gate stays.
    (repo / ".github/stepwise.yml").write_text(config_text())
    plain = cli("approve", "--repo", repo)
    assert plain.code == 3 and load_job(repo, 1).baseline_ok is False, plain.text

    reloaded = cli("approve", "--repo", repo, "--reload-config")
    assert reloaded.code == 3, reloaded.text
    assert "config reloaded; planning again" in reloaded.out and "plan approved" in reloaded.out
    job = load_job(repo, 1)
    assert job.baseline_ok is True and job.config.validate_commands == [VALIDATE]
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert job.config_source == "working tree"

    late = cli("approve", "--repo", repo, "--reload-config")  # after approval: refused
    assert late.code == 2 and "only at the plan gate" in late.err, late.text
    assert git(repo, "status", "--porcelain", "--untracked-files=no").strip()
