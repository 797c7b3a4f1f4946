"""A campaign over real local checkouts: the preview and its plan gate, canaries, waves, the
halt when a canary fails, resume, bulk approve, skip, add and cancel, and the dashboard file."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.basics.errors import BadInputError
from jobs.inputs.spec_block import InvalidSpecError
from jobs.local_campaigns import default_state_dir, run_campaign
from tests.kit.repos import git, make_repo

CONFIG = 'validate: ["python -m unittest discover -s tests -q"]\nbatch_size: 5\n'
GOOD_LIB = "def old(x):\n    return x\n\n\ndef new(x):\n    return x\n"
BROKEN_LIB = "def old(x):\n    return x\n"  # `new` is missing: the change breaks the tests
USER = "from app.lib import old\n\n\ndef double(x):\n    return old(x) * 2\n"
TEST = ("import unittest\n\nfrom app.user import double\n\n\nclass T(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(double(2), 4)\n")


def checkout(root: Path, name: str, *, broken: bool = False, match: bool = True) -> Path:
    return make_repo(root / name, {
        ".github/stepwise.yml": CONFIG,
        "app/__init__.py": "",
        "app/lib.py": BROKEN_LIB if broken else GOOD_LIB,
        "app/user.py": USER if match else USER.replace("old", "new"),
        "tests/__init__.py": "",
        "tests/test_user.py": TEST,
    })


def issue(tmp: Path, campaign: str = "canary: 2\n  wave: 10") -> Path:
    path = tmp / "campaign.md"
    path.write_text("# Use new() instead of old()\n\n```stepwise\nrecipe: replace\n"
                    "paths: [\"app/user.py\"]\nfind: ['\\bold\\b']\nreplace: 'new'\n"
                    f"campaign:\n  {campaign}\n```\n")
    return path


def committed(repo: Path) -> str:
    return git(repo, "show", "stepwise/issue-1:app/user.py")


def test_preview_changes_nothing_and_waits_at_the_plan_gate(tmp_path: Path) -> None:
    repos = [checkout(tmp_path, "one"), checkout(tmp_path, "two", match=False)]
    result = run_campaign(issue(tmp_path), repos)
    assert result.exit_code == 3
    assert "This is the preview" in result.dashboard
    # Per repository: the files in scope by name, and the validation that will judge it.
    assert ("| one | 1 files, 2 targets: `app/user.py` | "
            "`python -m unittest discover -s tests -q` |") in result.dashboard
    assert "no `find` match: nothing to change" in result.dashboard  # `two`, with the reason
    # The edit itself, dry-run on one file (nothing written): what approving means.
    assert ("one:\n\n```diff\n--- a/app/user.py\n+++ b/app/user.py\n@@ -1 +1 @@\n"
            "-from app.lib import old\n+from app.lib import new\n@@ -5 +5 @@\n"
            "-    return old(x) * 2\n+    return new(x) * 2\n```") in result.dashboard
    for repo in repos:  # no job, no branch anywhere
        assert FileStore(Repository(repo).state_dir).numbers() == []
        assert git(repo, "branch", "--list", "stepwise/*") == ""
    assert (default_state_dir(tmp_path / "campaign.md") / "dashboard.md").read_text() \
        == result.dashboard


def test_approve_all_runs_canaries_then_waves_to_completion(tmp_path: Path) -> None:
    repos = [checkout(tmp_path, name) for name in ("a", "b", "c", "d")]
    path = issue(tmp_path, "canary: 1\n  wave: 2")
    run_campaign(path, repos)
    result = run_campaign(path, [], command="approve all")
    assert result.exit_code == 0, result.dashboard
    assert "Status: **completed**" in result.dashboard
    assert "4 of 4 repositories completed · 3 wave(s) started" in result.dashboard
    for repo in repos:
        assert "return new(x) * 2" in committed(repo)


def test_a_failing_canary_halts_the_campaign_before_any_wave(tmp_path: Path) -> None:
    repos = [checkout(tmp_path, "bad", broken=True), checkout(tmp_path, "good"),
             checkout(tmp_path, "later1"), checkout(tmp_path, "later2")]
    path = issue(tmp_path, "canary: 2\n  wave: 10\n  halt_when_failing: 0.2")
    run_campaign(path, repos)
    result = run_campaign(path, [], command="approve all")
    assert result.exit_code == 4
    assert "Status: **halted**: 1 of 2 started repositories need a human" in result.dashboard
    for name in ("later1", "later2"):  # the wave after the canaries never started
        assert git(tmp_path / name, "branch", "--list", "stepwise/*") == ""
    # `resume` acknowledges the failing canary: the next wave starts and completes.
    result = run_campaign(path, [], command="resume")
    assert "return new(x) * 2" in committed(tmp_path / "later1")
    assert "Needs a human (1)" in result.dashboard
    assert result.exit_code == 4  # `bad` still needs its human
    # Skipping it (its job is cancelled) ends the campaign.
    result = run_campaign(path, [], command="skip bad the fix lands upstream first")
    assert result.exit_code == 0, result.dashboard
    assert "Skipped (1)" in result.dashboard and "the fix lands upstream first" in result.dashboard


def test_pause_add_and_cancel(tmp_path: Path) -> None:
    repos = [checkout(tmp_path, "x"), checkout(tmp_path, "y")]
    extra = checkout(tmp_path, "z")
    path = issue(tmp_path, "canary: 1\n  wave: 1")
    run_campaign(path, repos)
    result = run_campaign(path, [], command=f"add {extra}")
    assert any(line.startswith("z: 1 files in scope") for line in result.said), result.said
    result = run_campaign(path, [], command="approve x")
    assert "return new(x) * 2" in committed(tmp_path / "x")
    assert run_campaign(path, [], command="pause").exit_code == 3
    result = run_campaign(path, [], command="cancel")
    assert result.exit_code == 5
    assert git(tmp_path / "y", "branch", "--list", "stepwise/*") == ""


def test_bad_input_names_the_problem(tmp_path: Path) -> None:
    repo = checkout(tmp_path, "only")
    with pytest.raises(InvalidSpecError, match=r"campaign.wave"):
        run_campaign(issue(tmp_path, "wave: 0"), [repo])
    with pytest.raises(InvalidSpecError, match=r"did you mean"):
        run_campaign(issue(tmp_path, "canaries: 1"), [repo])
    path = issue(tmp_path)
    run_campaign(path, [repo])
    with pytest.raises(BadInputError, match=r"unknown campaign command 'aprove'.*`approve`"):
        run_campaign(path, [], command="aprove all")
    with pytest.raises(BadInputError, match=r"'nope' is not a repository"):
        run_campaign(path, [], command="approve nope")


def test_a_spec_change_after_approval_pauses_and_resume_replans_started_jobs(
        tmp_path: Path) -> None:
    repos = [checkout(tmp_path, "p", broken=True), checkout(tmp_path, "q")]
    path = issue(tmp_path, "canary: 2\n  halt_when_failing: 0.9")
    run_campaign(path, repos)
    result = run_campaign(path, [], command="approve all")
    assert result.exit_code == 4 and "Needs a human (1)" in result.dashboard  # `p` is broken
    # The fix, in the spec: `old(x)` becomes `old (x)`, which `p` (no `new`) also passes.
    path.write_text(path.read_text().replace("replace: 'new'", "replace: 'old ('")
                    .replace("\\bold\\b", "\\bold\\("))
    result = run_campaign(path, [])
    assert "The spec changed; the campaign is paused" in result.said[0]
    assert "Status: **paused**" in result.dashboard
    result = run_campaign(path, [], command="resume")
    assert any("re-plan" in line for line in result.said), result.said
    assert any(line.startswith("p: replan") for line in result.said), result.said
    assert result.exit_code == 0, result.dashboard  # `p` re-planned, passed and completed
    assert "return old (x) * 2" in committed(tmp_path / "p")


def test_the_cli_prints_the_dashboard_and_exits_with_the_campaigns_code(tmp_path: Path) -> None:
    import subprocess

    from tests.kit.local_e2e import STEPWISE

    repo = checkout(tmp_path, "cli")
    path = issue(tmp_path)
    done = subprocess.run([str(STEPWISE), "campaign", "--issue", str(path), str(repo)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "This is the preview" in done.stdout and "cli" in done.stdout
    done = subprocess.run([str(STEPWISE), "campaign", "--issue", str(path), "--command",
                           "cancle"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "did you mean `cancel`" in done.stderr


def test_reading_a_repository_back_reads_its_job_record_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = issue(tmp_path, "canary: 1\n  wave: 10\n  halt_when_failing: 0.2")
    run_campaign(path, [checkout(tmp_path, "bad", broken=True), checkout(tmp_path, "good")])
    halted = run_campaign(path, [], command="approve all")
    assert halted.exit_code == 4 and "Needs a human (1)" in halted.dashboard
    loads: list[int] = []
    real_load = FileStore.load

    def counted(store: FileStore, number: int) -> object:
        loads.append(number)
        return real_load(store, number)
    monkeypatch.setattr(FileStore, "load", counted)
    again = run_campaign(path, [])  # reads the one open repository (`bad`) back
    assert loads == [1]
    # What the one read gave: the state, and the reason from the job's status message.
    assert again.dashboard == halted.dashboard and "`failure`" in again.dashboard


def printed_commands(dashboard: str, start: str) -> list[str]:
    """The commands the dashboard prints in code spans, beginning with `start`."""
    import re
    return [c for c in re.findall(r"`([^`]+)`", dashboard) if c.startswith(start)]


def test_every_printed_command_runs_as_printed(tmp_path: Path) -> None:
    """Pasted into a POSIX shell as printed, the dashboard's commands work, paths with spaces
    and all: the preview's `approve all`, then the answer a repository's gate prints."""
    import subprocess

    from tests.kit.local_e2e import STEPWISE

    home = tmp_path / "my campaigns"
    home.mkdir()
    repos = [checkout(home, "svc one"), checkout(home, "svc two", broken=True)]
    path = issue(home, "canary: 2\n  halt_when_failing: 1")
    preview = run_campaign(path, repos)
    approve = printed_commands(preview.dashboard, "stepwise campaign")
    assert approve[0] == (f"stepwise campaign --issue '{path}' --command 'approve all'"), approve
    env = {"PATH": f"{STEPWISE.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(approve[0], shell=True, capture_output=True, text=True, timeout=300,
                          env=env, check=False)
    assert done.returncode == 4, done.stderr  # ran: `svc two` needs a human
    dashboard = (default_state_dir(path) / "dashboard.md").read_text()
    retry = printed_commands(dashboard, "stepwise retry")
    assert retry == [f"stepwise retry --repo '{home / 'svc two'}' --number 1"], dashboard
    done = subprocess.run(retry[0], shell=True, capture_output=True, text=True, timeout=300,
                          env=env, check=False)
    assert done.returncode == 4 and "no such option" not in done.stderr.lower(), done.stderr
    assert "Batch 1" in done.stdout or "failure" in done.stdout + done.stderr


def test_yes_approves_the_campaigns_plan_gate_as_run_yes_does(tmp_path: Path) -> None:
    import subprocess

    from tests.kit.local_e2e import STEPWISE

    repos = [checkout(tmp_path, "a"), checkout(tmp_path, "b")]
    path = issue(tmp_path, "canary: 1\n  wave: 1")
    done = subprocess.run([str(STEPWISE), "campaign", "--issue", str(path),
                           *map(str, repos), "--yes"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 repositories approved" in done.stdout
    assert "Status: **completed**" in (default_state_dir(path) / "dashboard.md").read_text()
    for repo in repos:
        assert "return new(x) * 2" in committed(repo)


def test_a_rerun_follows_the_earlier_job_instead_of_starting_a_duplicate(tmp_path: Path) -> None:
    """The campaign's state folder is lost (another machine, a clean-up): running it again
    over the same checkout finds the job an earlier run started there, its branch unmerged."""
    import shutil

    repo = checkout(tmp_path, "svc")
    path = issue(tmp_path, "canary: 1")
    assert run_campaign(path, [repo], yes=True).exit_code == 0
    shutil.rmtree(default_state_dir(path))
    again = run_campaign(path, [repo], yes=True)
    assert FileStore(Repository(repo).state_dir).numbers() == [1]  # no second job
    assert git(repo, "branch", "--list", "stepwise/*").split() == ["stepwise/issue-1"]
    assert again.exit_code == 0 and "1 of 1 repositories completed" in again.dashboard
