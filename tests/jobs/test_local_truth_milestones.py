"""Milestones where nothing changed open no gate (issue 41.5): one line says so and the job goes
on to the next milestone. Through the real `stepwise run` and `approve` on a real checkout."""

from __future__ import annotations

from pathlib import Path

from tests.jobs.test_local_exact_counts import CODEMOD
from tests.kit.local_e2e import NUMBER, build_sample, cli, config_text, load_job, write_issue
from tests.kit.repos import commit_all


def test_a_milestone_that_changed_nothing_opens_no_gate(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=1,
                                                              batches_per_milestone=1))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    commit_all(repo, "the codemod")
    # Batch 1 (milestone 1) is calc/alpha/__init__.py: the codemod has nothing to change there.
    issue = write_issue(tmp_path / "issue.md", recipe="command", replace=None, find=None,
                        exclude=None, paths=["calc/alpha/*.py"],
                        run="python tools/codemod.py {files}")
    planned = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER))
    assert planned.code == 3, planned.text
    assert load_job(repo).batches[0].files == ["calc/alpha/__init__.py"]

    done = cli("approve", "--repo", repo, "--number", str(NUMBER))
    assert done.code == 3, done.text
    said = done.out.splitlines()
    assert ("→ milestone 1 of 3 changed nothing (its batch had nothing to change); no gate "
            "opened for it") in said
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == "milestone" and job.gate.milestone == 2
    assert "milestone 1 of 3 is done" not in done.out
    assert [b.status for b in job.batches] == ["skipped", "completed", "pending"]
