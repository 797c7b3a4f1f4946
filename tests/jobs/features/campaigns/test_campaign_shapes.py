"""A local campaign's dashboard sums the edit shapes of all its checkouts, so one review covers
them all: the preview's dry runs, then each job's committed batches; each kind of edit once with
its count and one example, the outlier (a shape one repository alone has) first. Each job's card
and change note name the campaign. Driven through the `stepwise campaign` command line, reading
what a reviewer reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.local_campaigns import default_state_dir
from tests.kit.local_e2e import STEPWISE
from tests.kit.repos import git, make_repo

CONFIG = 'validate: ["python -m unittest discover -s tests -q"]\nbatch_size: 5\n'
LIB = "def old(x):\n    return x\n\n\ndef new(x):\n    return x\n"
PADDING = "".join(f"P{n} = {n}\n" for n in range(8))  # keeps the hunks apart
USER = f"from app.lib import old\n{PADDING}\n\ndef double(x):\n    return old(x) * 2\n"
ODD = f"{PADDING}CALLS = {{'double': old}}\n"  # one repository's own kind of edit
TEST = ("import unittest\n\nfrom app.user import double\n\n\nclass T(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(double(2), 4)\n")
ISSUE = ("# Use new() instead of old()\n\n```stepwise\nrecipe: replace\npaths: [\"app/user.py\"]\n"
         "find: ['\\bold\\b']\nreplace: 'new'\ncampaign:\n  canary: 1\n  wave: 5\n```\n")


def checkout(root: Path, name: str, *, odd: bool = False) -> Path:
    return make_repo(root / name, {
        ".github/stepwise.yml": CONFIG, "app/__init__.py": "", "app/lib.py": LIB,
        "app/user.py": USER + (ODD if odd else ""), "tests/__init__.py": "",
        "tests/test_user.py": TEST})


def stepwise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(STEPWISE), "campaign", *args], capture_output=True, text=True,
                          timeout=300, check=False)


HEAD = ("### Edit shapes summed over 3 repositories: 3 kinds of edit in 7 hunks, "
        "1 to review first")
LINES = [
    "- review first: 1 hunk, seen once like `c: app/user.py:22`: "
    "`CALLS = {'double': old}` → `CALLS = {'double': new}`",
    "- 3 hunks (42%) like `a: app/user.py:1`: `from app.lib import old` → "
    "`from app.lib import new`",
    "- 3 hunks (42%) like `a: app/user.py:13`: `return old(x) * 2` → `return new(x) * 2`",
]


# The same, as the terminal renders the Markdown (whitespace folded).
SHOWN = (f"{HEAD[4:]} One review covers every repository: each kind of edit once, with how often "
         "it was made and one example (the preview's dry run until a repository's job commits, "
         "then its committed batches); review the outliers first. "
         "• review first: 1 hunk, seen once like c: app/user.py:22: CALLS = {'double': old} → "
         "CALLS = {'double': new} • 3 hunks (42%) like a: app/user.py:1: from app.lib import old "
         "→ from app.lib import new • 3 hunks (42%) like a: app/user.py:13: return old(x) * 2 → "
         "return new(x) * 2")


def section(page: str) -> list[str]:
    assert HEAD in page, page
    return page[page.index(HEAD):].splitlines()[4:7]


def test_the_dashboard_sums_shapes_and_each_job_names_its_campaign(tmp_path: Path) -> None:
    repos = [checkout(tmp_path, "a"), checkout(tmp_path, "b"), checkout(tmp_path, "c", odd=True)]
    path = tmp_path / "campaign.md"
    path.write_text(ISSUE)

    preview = stepwise("--issue", str(path), *map(str, repos))
    assert preview.returncode == 3, preview.stderr
    # The preview's dry runs (one file of each checkout): one review for all three, in the
    # dashboard file and as the terminal shows it.
    assert section((default_state_dir(path) / "dashboard.md").read_text()) == LINES
    assert SHOWN in " ".join(preview.stdout.split()), preview.stdout

    done = stepwise("--issue", str(path), "--command", "approve all")
    assert done.returncode == 0, done.stdout + done.stderr
    dashboard = (default_state_dir(path) / "dashboard.md").read_text()
    assert "Status: **completed**" in dashboard
    # After the run: the jobs' committed batches, summed the same way.
    assert section(dashboard) == LINES
    assert SHOWN in " ".join(done.stdout.split())

    # Every job of the campaign names it, in its card (the checkout's log) and its note.
    said = (f"Part of the campaign `{path}` (`stepwise campaign --issue {path}` shows its "
            "dashboard)")
    for repo in repos:
        job = FileStore(Repository(repo).state_dir).load(1)
        assert job is not None and job.part_of == str(path)
        assert f"- {said}\n" in git(repo, "show", f"{job.branch}:{job.note_path}")
        log = (default_state_dir(path) / "logs" / f"{repo.name}.log").read_text()
        assert f"\n{said}\n" in log, log
