"""A campaign run again over a checkout where an earlier job of the same change ended (cancelled)
with its branch unmerged starts no duplicate (issue 41.5): the repository's row names the
branch and what to do, and nothing new is made; once the branch is gone, `retry-failed` starts
the job. Through the real `stepwise campaign` and `stepwise cancel`."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.local_campaigns import default_state_dir
from tests.kit.local_e2e import STEPWISE, CliResult, cli
from tests.kit.repos import git, make_repo

CONFIG = ('validate: ["python -m unittest discover -s tests -q"]\nallow_commands: [python]\n'
          "batch_size: 1\nbatches_per_milestone: 1\n")
LIB = "def old(x):\n    return x\n\n\ndef new(x):\n    return x\n"
USER = "from app.lib import old\n\n\ndef {name}(x):\n    return old(x)\n"


def checkout(root: Path) -> Path:
    return make_repo(root / "svc", {
        ".github/stepwise.yml": CONFIG, "app/__init__.py": "", "app/lib.py": LIB,
        "app/a.py": USER.format(name="a"), "app/b.py": USER.format(name="b"),
        "tests/__init__.py": "", "tests/test_app.py": "import app.a\nimport app.b\n"})


def campaign(*args: str | Path) -> CliResult:
    done = subprocess.run([str(STEPWISE), "campaign", *map(str, args)], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "300", "NO_COLOR": "1"})
    return CliResult(done.returncode, done.stdout, done.stderr)


def test_a_rerun_over_a_cancelled_jobs_unmerged_branch_starts_no_duplicate(
        tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    issue = tmp_path / "campaign.md"
    issue.write_text("# Use new() instead of old()\n\n```stepwise\nrecipe: replace\n"
                     "paths: [\"app/a.py\", \"app/b.py\"]\nfind: ['\\bold\\b']\nreplace: 'new'\n"
                     "campaign:\n  canary: 1\n```\n")
    first = campaign("--issue", issue, repo, "--yes")
    assert first.code == 3, first.out + first.err  # job #1 waits at its first milestone gate
    assert cli("cancel", "--repo", repo, "--number", "1").code == 5
    assert git(repo, "rev-list", "--count", "main..stepwise/issue-1") != "0"  # unmerged work
    shutil.rmtree(default_state_dir(issue))  # the campaign's own record is gone

    again = campaign("--issue", issue, repo, "--yes")
    said = " ".join(again.out.replace("\u200b", "").split())  # as the terminal shows it
    delete = shlex.join(["git", "-C", str(repo), "branch", "-D", "stepwise/issue-1"])
    retry = f"stepwise campaign --issue {shlex.quote(str(issue))} --command retry-failed"
    assert ("svc 2 files, 4 targets python -m unittest discover -s tests -q — — the checkout "
            "has stepwise/issue-1, the unmerged branch of an earlier job of this change (#1, "
            "cancelled); no second job was started: merge that branch, or delete it "
            f"({delete}), then {retry}") in said, said
    dashboard = (default_state_dir(issue) / "dashboard.md").read_text()
    assert f"`{delete}`" in dashboard and f"`{retry}`" in dashboard  # code spans: they paste
    assert FileStore(Repository(repo).state_dir).numbers() == [1]  # no second job
    assert git(repo, "branch", "--list", "stepwise/*").split() == ["stepwise/issue-1"]

    git(repo, "branch", "-D", "stepwise/issue-1")
    retried = campaign("--issue", issue, "--command", "retry-failed")
    assert "svc: retry → waiting" in retried.out, retried.out + retried.err  # at its gate
    assert FileStore(Repository(repo).state_dir).numbers() == [1, 2]
