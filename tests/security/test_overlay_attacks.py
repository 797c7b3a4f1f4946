"""Attacks on the overlay that keeps a validation's writes apart from the job's worktree
(jobs/adapters/scratch.py), as the repository's own code would make them: real bubblewrap,
real overlayfs in a user namespace, real git. The invariant under attack: nothing a sandboxed
command does survives into the next batch or a commit, or steers what Stepwise runs outside
the sandbox (docs/security.md, "Git calls, attributes and links").

Everything lives under /var/tmp (the sandbox's private /tmp would hide /tmp by itself), in a
server-like layout: the clone and the job's worktree under a workdir that the sandbox hides.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters import sandbox_view
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from jobs.adapters.workspace import Repository
from jobs.adapters.worktree import Worktree
from tests.jobs.adapters.test_worktree_reset import manifest
from tests.kit.repos import git, make_repo
from tests.security import hostile

OVERLAY_OK = sb.bubblewrap_available() and not sb._overlay_refusal(BubblewrapSandbox().bwrap)
if os.environ.get("CI") == "true" and not OVERLAY_OK:
    raise RuntimeError("an overlay in a user namespace must work in CI (Linux 5.11+, util-linux)")
pytestmark = [hostile.needs_bwrap,
              pytest.mark.skipif(not OVERLAY_OK, reason="no overlay in a user namespace here")]

FILES: dict[str, str | bytes] = {
    "README.md": "# demo\n",
    ".gitignore": "build/\n",
    "src/app.py": "print('hi')\n",
    "src/deep/mod.py": "VALUE = 1\n",
    "src/deep/other.py": "OTHER = 2\n",
    "tool.sh": "#!/bin/sh\necho tool\n",
}


@dataclass
class Job:
    """A clone and a job's worktree under a hidden workdir, and a host folder (`outside`) that
    only a program running outside the sandbox could write: the evidence of an escape."""

    origin: Path
    worktree: Worktree
    workdir: Path
    outside: Path

    @property
    def head(self) -> str:
        return git(self.origin, "rev-parse", "HEAD")

    def policy(self, **kwargs: object) -> SandboxPolicy:
        return SandboxPolicy(allow_commands=("python3",), timeout=60,  # type: ignore[arg-type]
                             hidden_paths=(self.workdir,), **kwargs)

    def run(self, code: str, *args: str, **kwargs: object) -> str:
        """`code` run by python3 in the sandbox over the job's worktree; its output."""
        result = BubblewrapSandbox().run(["python3", "-c", code, *args], cwd=self.worktree.path,
                                         policy=self.policy(**kwargs))
        assert result.exit_code == 0, result.output_tail
        return result.output_tail

    def fresh(self, sha: str) -> dict[str, tuple[str, int, bytes]]:
        """The files of a worktree checked out at `sha` from nothing."""
        other = Repository(self.origin).open_worktree(self.workdir / "fresh" / "wt", sha)
        try:
            return manifest(other.path)
        finally:
            other.remove()


def make_job(root: Path, files: dict[str, str | bytes] = FILES,
             executable: tuple[str, ...] = ("tool.sh",)) -> Job:
    workdir = root / "workdir"
    origin = make_repo(workdir / "clone", files)
    git(origin, "update-index", "--chmod=+x", *executable)
    git(origin, "commit", "-q", "-m", "executable files")
    worktree = Repository(origin).open_worktree(workdir / "worktrees" / "issue-1",
                                                git(origin, "rev-parse", "HEAD"))
    outside = root / "outside"
    outside.mkdir()
    return Job(origin, worktree, workdir, outside)


@pytest.fixture
def job(outside_tmp: Path) -> Iterator[Job]:
    made = make_job(outside_tmp)
    yield made
    made.worktree.remove()


def escape_program(outside: Path, name: str) -> str:
    """A stand-in for `name` that leaves a mark in `outside`, then does the real thing."""
    return f'#!/bin/sh\necho "{name} ran outside the sandbox" > {outside}/{name}\n' \
           f'exec /usr/bin/{name} "$@"\n'


# -- the launcher: unshare and mount run outside the sandbox, as the worker --------------------
@pytest.mark.parametrize("where", ["sandbox-path", "relative-path-entry"])
def test_no_program_of_the_launcher_is_found_where_others_can_put_one(
        outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The overlay is mounted by a shell outside the sandbox, in the worktree, with every file
    of the host writable. Its `mount` was found on the command's PATH, whose first entries are
    the sandbox's own places (/tmp/stepwise/repo/.venv/bin, ...: on the host, in a /tmp any
    local user may write), and a relative entry in the worker's PATH (`bin`, or an empty one)
    named the repository's own files: either ran a planted `mount` on the host."""
    programs = ("mount", "unshare")
    if where == "relative-path-entry":  # the repository's own, tracked and executable
        job = make_job(outside_tmp, FILES | {f"bin/{name}": escape_program(
            outside_tmp / "outside", name) for name in programs},
            executable=("tool.sh", *(f"bin/{name}" for name in programs)))
        monkeypatch.setenv("PATH", f"bin{os.pathsep}{os.environ['PATH']}")
    else:  # the sandbox's /tmp/stepwise/repo/.venv/bin, as the host sees it
        job = make_job(outside_tmp)
        mount_point = outside_tmp / "host-tmp" / "stepwise" / "repo"
        planted = mount_point / ".venv" / "bin"
        planted.mkdir(parents=True)
        monkeypatch.setattr(sandbox_view, "REPO_MOUNT", mount_point)
        for name in programs:
            (planted / name).write_text(escape_program(job.outside, name))
            (planted / name).chmod(0o755)
    sb.reset_sandbox_caches()
    try:
        said = job.run("open('made.txt', 'w').write('x'); print('ran')")
        assert said.strip() == "ran"
        assert sorted(os.listdir(job.outside)) == []  # no planted program ran on the host
        assert not (job.worktree.path / "made.txt").exists()  # ... and the write stayed apart
    finally:
        job.worktree.remove()
