"""Stepwise's own programs (git, bwrap, unshare, mount) run outside the sandbox, as the worker:
a relative PATH entry of the worker (an empty one, `.`, `bin`) must never find them among the
repository's files (jobs/adapters/host_programs.py). Real git, real bubblewrap: each planted
program leaves a mark in a folder only a program run on the host could write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters.git_runner import GitSession, git_process
from jobs.adapters.host_programs import host_path, host_program
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from jobs.adapters.workspace import Repository
from tests.kit.repos import git, make_repo
from tests.security import hostile

RELATIVE = ("bin", "", ".")


def plant(folder: Path, name: str, outside: Path) -> None:
    """A `name` in `folder` and `folder/bin` that leaves a mark in `outside`, then fails."""
    for where in (folder, folder / "bin"):
        where.mkdir(parents=True, exist_ok=True)
        program = where / name
        program.write_text(f'#!/bin/sh\necho "{name} from {where}" >> {outside}/{name}\nexit 3\n')
        program.chmod(0o755)


def relative_path_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join((*RELATIVE, os.environ["PATH"])))


def test_the_resolver_keeps_only_absolute_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    plant(tmp_path / "repo", "git", outside)
    monkeypatch.chdir(tmp_path / "repo")
    relative_path_first(monkeypatch)
    assert all(os.path.isabs(entry) for entry in host_path().split(os.pathsep))
    found = host_program("git")
    assert found is not None and os.path.isabs(found)
    assert not Path(found).is_relative_to(tmp_path)


def test_git_is_never_found_in_the_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git runs in the worktree or the clone; with `bin` or an empty entry on the worker's PATH
    a bare `git` was the repository's own bin/git (and so were the programs git starts)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    origin = make_repo(tmp_path / "clone", {"README.md": "# demo\n"})
    head = git(origin, "rev-parse", "HEAD")
    plant(origin, "git", outside)
    relative_path_first(monkeypatch)
    monkeypatch.chdir(origin)

    done = git_process(["rev-parse", "HEAD"], cwd=origin, git_dir=origin / ".git")
    assert done.returncode == 0 and done.stdout.decode().strip() == head
    worktree = Repository(origin).open_worktree(tmp_path / "worktrees" / "issue-1", head)
    try:
        plant(worktree.path, "git", outside)
        done = git_process(["status", "--porcelain"], cwd=worktree.path,
                           git_dir=origin / ".git", work_tree=worktree.path)
        assert done.returncode == 0
        session = GitSession(["cat-file", "--batch-check"], cwd=worktree.path,
                             git_dir=origin / ".git")
        try:
            process = session.process()
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(f"{head}\n".encode())
            process.stdin.flush()
            assert process.stdout.readline().split()[0].decode() == head
        finally:
            session.stop()
    finally:
        worktree.remove()
    assert sorted(os.listdir(outside)) == []  # no planted git ran


@hostile.needs_bwrap
def test_bwrap_is_never_found_in_the_working_directory(
        outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`BubblewrapSandbox` looked bwrap up with relative entries allowed: the worker's working
    directory (a checkout, a worktree) could hand it a bwrap of its own, run on the host."""
    outside = outside_tmp / "outside"
    outside.mkdir()
    work = outside_tmp / "work"
    for name in ("bwrap", "unshare", "mount"):
        plant(work, name, outside)
    monkeypatch.chdir(work)
    relative_path_first(monkeypatch)
    sb.reset_sandbox_caches()
    try:
        sandbox = BubblewrapSandbox()
        assert os.path.isabs(sandbox.bwrap) and not Path(sandbox.bwrap).is_relative_to(work)
        assert sb.bubblewrap_available()
        result = sandbox.run(["python3", "-c", "print('ran')"], cwd=work,
                             policy=SandboxPolicy(allow_commands=("python3",), timeout=60))
        assert result.exit_code == 0, result.output_tail
        assert result.output_tail.strip() == "ran"
    finally:
        sb.reset_sandbox_caches()
    assert sorted(os.listdir(outside)) == []  # no planted program ran
