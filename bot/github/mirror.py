"""Server-mode git: one cached bare clone per repository; job branches fetched and pushed with a fresh token.

The remote is the truth: reading a branch head fetches it first, and moving a branch pushes it
or lands it through the Git Data API (never forced, but to withdraw Stepwise's own CI-rejected
tip while the branch is at its exact sha). Credentials go to git per call as an
`http.extraHeader`, never into a URL, the git config, a log or an error message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.github.clone_use import locked
from bot.github.git_data import WORKFLOWS_REFUSED, refusal
from jobs.adapters import tree_fd
from jobs.adapters.workspace import Repository, WithdrawRefusedError, run_git
from jobs.basics.errors import RetryClass, WorkspaceError

if TYPE_CHECKING:
    from bot.github.git_data import ApiCommits
    from jobs.ports import Commit

AuthArgs = Callable[[], list[str]]


def _redacted(exc: WorkspaceError, auth: list[str]) -> WorkspaceError:
    message = exc.message
    for part in auth:
        message = message.replace(part, "[redacted]")
    return WorkspaceError(message, hint=exc.hint, code=exc.code, retry_class=RetryClass.AUTO_RETRY)


class MirroredRepository(Repository):
    """A bare clone whose branch reads fetch from, and branch moves push to, `origin`."""

    def __init__(self, path: Path, *, auth: AuthArgs, lock_path: Path) -> None:
        super().__init__(path)
        self.auth = auth
        self.lock_path = lock_path
        self.api: ApiCommits | None = None  # set: commits land through the Git Data API

    def remote(self, *args: str) -> str:
        auth = self.auth()
        try:
            with locked(self.lock_path):
                return run_git([*auth, *args], cwd=self.root, git_dir=self.git_dir)
        except WorkspaceError as exc:
            raise _redacted(exc, auth) from None

    def remote_head(self, branch: str) -> str | None:
        out = self.remote("ls-remote", "origin", f"refs/heads/{branch}").split()
        return out[0] if out else None

    def branch_head(self, branch: str) -> str | None:
        remote = self.remote_head(branch)
        if remote is None:
            return super().branch_head(branch)  # not pushed yet
        if remote != super().branch_head(branch):
            self.remote("fetch", "--quiet", "--no-tags", "origin",
                        f"+refs/heads/{branch}:refs/heads/{branch}")
        return remote

    def advance_branch(self, branch: str, new: str, old: str) -> str:
        """Land commit `new` on `branch` (at `old`): re-created through the API (signed by
        GitHub; its sha is returned and the local branch fetched to it) or pushed with git."""
        if self.api is not None:
            landed = self.api.land(self, branch, new, old)
            self.remote("fetch", "--quiet", "--no-tags", "origin",
                        f"+refs/heads/{branch}:refs/heads/{branch}")
            self.git("update-ref", f"refs/heads/{branch}", landed)  # ours, whatever came after
            return landed
        super().advance_branch(branch, new, old)
        try:
            self.remote("push", "--quiet", "--no-verify", "origin", f"{new}:refs/heads/{branch}")
        except WorkspaceError as exc:
            super().advance_branch(branch, old, new)  # the remote did not take it: undo locally
            if WORKFLOWS_REFUSED in exc.message:  # not someone's push: retrying cannot help
                raise refusal(branch, 0, exc.message) from None
            raise WorkspaceError(
                f"pushing `{branch}` was refused: {exc.message[-300:]}",
                hint="someone may have pushed to the branch; the job re-reads it and continues",
                code="push_rejected", retry_class=RetryClass.AUTO_RETRY,
            ) from None
        return new

    def own_commits(self, commits: Sequence[Commit], *,
                    made: Collection[str] | None = None) -> frozenset[str]:
        """Through the API: the commits GitHub signed as authored by the App's bot user
        (GitHub commits them as itself); a push can copy the bot's name, never GitHub's
        signature. With git: the commits it made (`made`, see Repository.own_commits)."""
        if self.api is None:
            return super().own_commits(commits, made=made)
        email = self.identity.get("GIT_AUTHOR_EMAIL", "")
        return frozenset(c.sha for c in commits if self.api.signed_by_app(c.sha, email))

    def withdraw(self, branch: str, candidate: str, to: str) -> None:
        """Withdraw our own CI-rejected `candidate` from the remote branch, only while the branch
        is still at that exact sha: a branch someone pushed on top of is never rewritten. With
        API commits the ref is compared and then forced through the Git Data API (no push, so
        nothing depends on git's view of workflow files); else a force-with-lease push."""
        ref = f"refs/heads/{branch}"
        if self.api is not None:
            self.api.withdraw(branch, candidate, to)
            self.git("update-ref", ref, to)
            return
        try:
            self.remote("push", "--quiet", "--no-verify", f"--force-with-lease={ref}:{candidate}",
                        "origin", f"{to}:{ref}")
        except WorkspaceError as exc:
            if self.remote_head(branch) != candidate:  # the lease was refused: it moved
                raise WithdrawRefusedError(
                    f"`{branch}` is no longer at `{candidate[:7]}` on GitHub, so it is not "
                    "withdrawn", hint="someone pushed on top of it; Stepwise never rewrites "
                    "their work") from None
            raise WorkspaceError(
                f"withdrawing `{candidate[:7]}` from `{branch}` failed: {exc.message[-300:]}",
                hint="the job tries again", code="push_rejected",
                retry_class=RetryClass.AUTO_RETRY) from None
        self.git("update-ref", ref, to)


def _usable(path: Path) -> bool:
    if not (path / "HEAD").exists():
        return False
    return run_git(["rev-parse", "--is-bare-repository"], cwd=path, git_dir=path,
                   check=False).strip() == "true"


def open_mirror(workdir: Path, full_name: str, clone_url: str, *, auth: AuthArgs,
                default_branch: str) -> MirroredRepository:
    """The cached bare clone of `full_name`, created or brought up to date."""
    owner, name = full_name.split("/", 1)
    path = workdir / "repos" / owner / f"{name}.git"
    lock = workdir / "repos" / owner / f"{name}.lock"
    credentials = auth()
    try:
        with locked(lock):
            if not _usable(path):  # absent, or left half-cloned by a worker that died
                tree_fd.discard(path)  # with the job worktrees kept inside
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
                tree_fd.discard(partial)
                run_git([*credentials, "clone", "--quiet", "--bare", "--no-tags", clone_url,
                         str(partial)], cwd=path.parent)
                os.replace(partial, path)  # a clone appears whole or not at all
            else:
                run_git([*credentials, "fetch", "--quiet", "--no-tags", "origin",
                         f"+refs/heads/{default_branch}:refs/heads/{default_branch}"], cwd=path,
                        git_dir=path)
    except WorkspaceError as exc:
        raise _redacted(exc, credentials) from None
    return MirroredRepository(path, auth=auth, lock_path=lock)
