"""The evidence from the real command line (issue 39): `stepwise run` on a real git repository
validated by real pytest in the sandbox stops at `uncovered_change` with exit code 4, printing
the figure and the lines the tests did not run; `stepwise status` shows the same words, and
`stepwise approve` commits the batch and finishes with the note's `## Evidence`."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.jobs.features.evidence.coverage_repos import python_repo
from tests.kit.local_e2e import cli, load_job, show

ISSUE = {"recipe": "replace", "paths": ["pkg/*.py"], "exclude": ["pkg/helpers.py"],
         "find": [r"\bold_helper\(x\)"], "replace": "new_helper(x)"}
FIGURE = "changed lines run by the tests: 1 of 2 (50%)"


def test_run_stops_at_uncovered_change_and_approve_commits(tmp_path: Path) -> None:
    repo = python_repo(tmp_path / "repo", config={"evidence": {"min_changed_coverage": 80}})
    issue = tmp_path / "task.md"
    issue.write_text("# Use new_helper\n\n```stepwise\n" + yaml.safe_dump(ISSUE) + "```\n")
    ran = cli("run", "--repo", repo, "--issue", issue, "--yes")
    assert ran.code == 4, ran.text
    shown = ran.text  # the terminal renders the Markdown: no backticks
    assert "Waiting at gate uncovered_change" in shown
    assert f"{FIGURE}, below evidence.min_changed_coverage (80%)" in shown
    assert "changed lines the tests did not run: pkg/orphan.py:7" in shown
    assert "approved earlier" not in shown  # --yes passed the plan gate: nobody saw its shapes
    assert "To commit the batch with its changed lines the tests did not run:\n  stepwise " \
        "approve --repo" in shown
    status = cli("status", "--repo", repo)
    assert FIGURE in status.text
    done = cli("approve", "--repo", repo)
    assert done.code == 0, done.text
    job = load_job(repo, 1)
    note = show(repo, job.branch, job.note_path)
    assert "## Evidence" in note and FIGURE in note
