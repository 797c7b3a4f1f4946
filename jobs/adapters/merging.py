"""Merging the base branch into a job branch, without a checkout: preview and merge commit.

`git merge-tree --write-tree` (git >= 2.38) merges two commits in the object store only: it
tells whether they conflict, in which files, and writes the merged tree (with conflict
markers in the conflicting files). The merge commit is written with `commit-tree` and two
parents, the job head first. Nothing here rebases, moves a branch or touches a work tree;
every call goes through jobs/adapters/git_runner.py and names the repository.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jobs.adapters.git_identity import signed_off
from jobs.adapters.git_runner import git_process, run_git
from jobs.adapters.workspace import BOT_IDENTITY
from jobs.basics.errors import WorkspaceError
from jobs.ports import Workspace

MIN_GIT = "2.38"


@dataclass(frozen=True)
class MergePreview:
    """The merge of `base` into `head`: its tree and the files that conflict (empty: clean)."""

    head: str
    base: str
    tree: str
    conflicts: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return not self.conflicts


def preview_merge(repo: Workspace, *, head: str, base: str) -> MergePreview:
    """Merge `base` into `head` in the object store only (nothing else changes)."""
    done = git_process(["-c", "core.quotepath=false", "merge-tree", "--write-tree", "-z",
                        "--name-only", "--no-messages", head, base],
                       cwd=repo.root, git_dir=repo.git_dir)
    if done.returncode not in (0, 1):
        error = done.stderr.decode(errors="replace").strip()[-500:]
        raise WorkspaceError(
            f"`git merge-tree` could not merge {base[:7]} into {head[:7]}: {error}",
            hint=f"Stepwise needs git {MIN_GIT} or newer to merge the base branch",
            code="merge_failed",
        )
    fields = done.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    conflicts = tuple(dict.fromkeys(name for name in fields[1:] if name))
    return MergePreview(head=head, base=base, tree=fields[0].strip(),
                        conflicts=conflicts if done.returncode == 1 else ())


def absent_paths(repo: Workspace, sha: str, paths: Iterable[str]) -> frozenset[str]:
    """Those of `paths` that are not files of `sha`."""
    wanted = list(paths)
    if not wanted:
        return frozenset()
    out = run_git(["-c", "core.quotepath=false", "ls-tree", "-z", "--name-only", sha, "--",
                   *wanted], cwd=repo.root, git_dir=repo.git_dir)
    present = {name for name in out.split("\0") if name}
    return frozenset(path for path in wanted if path not in present)


def commit_merge(repo: Workspace, *, tree: str, head: str, base: str, message: str) -> str:
    """A merge commit of exactly `tree` with the parents `head` (first) and `base`."""
    return run_git(["commit-tree", tree, "-p", head, "-p", base, "-F", "-"], cwd=repo.root,
                   git_dir=repo.git_dir, stdin=signed_off(message, repo),
                   env=getattr(repo, "identity", BOT_IDENTITY)).strip()
