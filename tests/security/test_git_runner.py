"""The one hardened git runner: nothing else starts git, and nothing planted steers it.

A source scan proves every git call in `jobs/` and `bot/` goes through jobs/adapters/git_runner.py; real
git calls in a directory holding a planted `.git` (a gitfile to a gitdir whose config sets
`core.fsmonitor`, hooks for every event, an alias) and with a hostile environment and global
config prove that the runner and the worktree operations never run a planted program.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.adapters.git_runner import run_git
from jobs.adapters.workspace import Repository
from tests.kit.repos import make_repo
from tests.security import git_attacks as attacks

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "jobs" / "adapters" / "git_runner.py"
PROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "system", "execv",
                 "execvp", "execvpe", "spawnv", "spawnvp", "create_subprocess_exec"}


def _starts_with_git(node: ast.AST) -> bool:
    return isinstance(node, ast.List | ast.Tuple) and bool(node.elts) and \
        isinstance(node.elts[0], ast.Constant) and node.elts[0].value == "git"


def git_calls_outside_the_runner() -> list[str]:
    """`file:line` of every argv literal starting with "git", and every process started with
    one, anywhere in jobs/ and bot/ except the runner."""
    found = []
    for source in sorted([*ROOT.glob("jobs/**/*.py"), *ROOT.glob("bot/**/*.py")]):
        if source == RUNNER or "sample" in source.parts:
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if _starts_with_git(node):
                found.append(f"{source.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in PROCESS_CALLS and node.args and \
                    isinstance(node.args[0], ast.Constant) and "git" in str(node.args[0].value):
                found.append(f"{source.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_but_the_runner_starts_git() -> None:
    assert git_calls_outside_the_runner() == []


def test_the_scan_finds_a_git_call_when_there_is_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    fake = tmp_path / "jobs" / "sneaky.py"
    fake.parent.mkdir()
    fake.write_text("import subprocess\nsubprocess.run(['git', 'status'], check=False)\n")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert git_calls_outside_the_runner() == ["jobs/sneaky.py:2"]


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, attacks.Targets, Path]:
    """A repository, a worktree of it, and in the worktree a planted gitfile + gitdir whose
    config runs the payload through fsmonitor, every hook and an alias."""
    repo = make_repo(tmp_path / "repo", {"src/app.py": "OLD_NAME = 1\n", ".gitignore": "*.log\n"})
    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "key").write_text("key\n")
    (tmp_path / "other").write_text("other\n")
    targets = attacks.Targets(markers=markers, key=tmp_path / "key", other=tmp_path / "other",
                              objects=repo / ".git" / "objects")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    return repo, targets, worktree


def plant(worktree: Path, targets: attacks.Targets, mode: str) -> None:
    script = attacks.PLANT.replace("__TARGETS__", targets.as_json()) + f"\nplant({mode!r})\n"
    # The planting code runs as sandboxed code would: its own process, in the worktree.
    subprocess.run([sys.executable, "-c", script], cwd=worktree, check=True, capture_output=True)
    with (worktree / ".git" if mode == "dotgit-dir" else worktree / "src" / ".git"
          ).joinpath("config").open("a") as config:
        config.write(f"[alias]\n\tst = !touch {targets.markers}/ran-alias\n")


def test_the_runner_ignores_planted_config_even_where_it_may_discover(
    planted: tuple[Path, attacks.Targets, Path],
) -> None:
    _, targets, worktree = planted
    (worktree / "src").mkdir()
    plant(worktree, targets, "dotgit-dir")
    # Discovery in `cwd` itself (the only kind the runner allows): the planted config is read,
    # but every program it names is switched off.
    run_git(["status", "--porcelain"], cwd=worktree, check=False)
    run_git(["add", "-A"], cwd=worktree, check=False)
    attacks.assert_no_marker(targets)


@pytest.mark.parametrize("mode", attacks.MODES)
def test_worktree_operations_never_read_planted_metadata(
    planted: tuple[Path, attacks.Targets, Path], mode: str,
) -> None:
    repo_path, targets, _ = planted
    repo = Repository(repo_path)
    head = repo.resolve("HEAD")
    assert head is not None
    tree = repo.open_worktree(repo_path.parent / "job", head)
    plant(tree.path, targets, mode)
    (tree.path / "src" / "app.py").write_text("NEW_NAME = 1\n")
    tree.stage_all()
    assert tree.staged_paths() == ["src/app.py"]
    assert "+NEW_NAME = 1" in tree.staged_diff()
    commit = tree.commit_tree(tree.write_tree(), head, "edit\n")
    repo.create_branch("stepwise/issue-1", commit)
    assert tree.merged_tree(commit) is not None
    tree.restore(commit)
    tree.reset(head)
    run_git(["st"], cwd=tree.path, git_dir=tree.private, work_tree=tree.path, check=False)
    attacks.assert_no_marker(targets)
    assert not (tree.path / ".git").exists()  # a reset removes a planted `.git` of any kind
    tree.remove()


def test_the_environment_and_global_config_never_reach_git(
    planted: tuple[Path, attacks.Targets, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    repo_path, targets, _ = planted
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[alias]\n\tst = !touch {targets.markers}/ran-global\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {targets.markers}/p'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", f"touch {targets.markers}/ran-external")
    monkeypatch.setenv("STEPWISE_WEBHOOK_SECRET", "s3cret-value")
    repo = Repository(repo_path)
    assert run_git(["st"], cwd=repo_path, git_dir=repo.git_dir, check=False) == ""
    shown = run_git(["-c", "alias.envdump=!env", "envdump"], cwd=repo_path, git_dir=repo.git_dir)
    assert "s3cret-value" not in shown and str(tmp_path / "elsewhere") not in shown
    assert "GIT_CONFIG_GLOBAL=/dev/null" in shown and "GIT_CONFIG_NOSYSTEM=1" in shown
    assert "GIT_CEILING_DIRECTORIES=" in shown
    (repo_path / "src" / "app.py").write_text("changed\n")
    run_git(["diff"], cwd=repo_path, git_dir=repo.git_dir, work_tree=repo_path)
    attacks.assert_no_marker(targets)
