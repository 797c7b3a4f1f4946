"""The one way Stepwise runs git: the repository named explicitly, programs switched off, a clean env.

Sandboxed code can write files in a job's worktree, so git must never find its repository,
configuration, hooks or programs there. Every call names its git directory (`--git-dir`, and
`--work-tree` when files are involved); the `-c` settings below switch off every config key
that makes git start a program on its own; system and global configuration are ignored; and
the environment holds no `GIT_*` variable from outside and no `STEPWISE_*` secret.
This module is the only place that starts git (tests/security/test_git_runner.py proves it).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from jobs.adapters.host_programs import host_path
from jobs.basics.errors import WorkspaceError

# `-c` settings given before every git command. Each one closes a way for a repository's
# configuration to run a program or change what git reads (docs/security.md, "Git calls").
HARDENING: tuple[str, ...] = (
    "-c", "core.fsmonitor=false",
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.untrackedCache=false",
    "-c", "core.attributesFile=/dev/null",
    "-c", "core.excludesFile=/dev/null",
    "-c", "core.pager=cat",
    "-c", "core.editor=false",
    "-c", "sequence.editor=false",
    "-c", "credential.helper=",
    "-c", "protocol.ext.allow=never",
    "-c", "submodule.recurse=false",
    "-c", "diff.noprefix=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
)

# Fixed variables; every other GIT_* variable of the worker's environment is dropped.
_FIXED_ENV = {
    "LC_ALL": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_OPTIONAL_LOCKS": "0",
}
_DROPPED_PREFIXES = ("GIT_", "STEPWISE_")


def git_env(*, cwd: Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git call: the worker's, without GIT_*/STEPWISE_* and without
    PATH's relative entries, plus fixed keys.

    GIT_CEILING_DIRECTORIES stops discovery at `cwd` for the few calls that look for a
    repository at all (the user's own checkout, once, when a job starts)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(_DROPPED_PREFIXES)}
    env.update(_FIXED_ENV)
    # git is found on this PATH, and so are the programs git starts: never through a relative
    # entry, which would name the worktree's own files (jobs/adapters/host_programs.py)
    env["PATH"] = host_path()
    if cwd is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(Path(cwd).resolve().parent)
    env.update(extra or {})
    return env


def git_argv(args: Sequence[str], *, git_dir: Path | None = None,
             work_tree: Path | None = None) -> list[str]:
    """The full argv: git, the repository, the hardening settings, then `args`."""
    argv = ["git"]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        argv.append(f"--work-tree={work_tree}")
    return [*argv, *HARDENING, *args]


def git_process(args: Sequence[str], *, cwd: Path, git_dir: Path | None = None,
                work_tree: Path | None = None, stdin: bytes | None = None,
                env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git (bytes in, bytes out) and return the finished process whatever its exit code.

    `env` adds to (never replaces) the hardened environment; `git_dir` None means the call
    looks for a repository in `cwd` and nowhere above it."""
    return subprocess.run(
        git_argv(args, git_dir=git_dir, work_tree=work_tree), cwd=cwd, input=stdin,
        capture_output=True, env=git_env(cwd=cwd, extra=env), check=False,
    )


class GitSession:
    """One long-lived git (`cat-file --batch-command`, jobs/adapters/object_reader.py;
    `update-ref --stdin`, jobs/adapters/ref_updates.py): the same argv and environment as
    every call, its stdin and stdout pipes for requests and answers, its stderr dropped (a
    failure shows as the answers ending). Started on first use and again after it ended; a
    forked child never writes to its parent's process, it starts its own."""

    def __init__(self, args: Sequence[str], *, cwd: Path, git_dir: Path) -> None:
        self._argv = git_argv(args, git_dir=git_dir)
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self.started = 0  # processes started (tests count them)

    def process(self) -> subprocess.Popen[bytes]:
        """The running process (OSError when it cannot be started)."""
        if self._owner != os.getpid():  # forked: the process and its pipes are the parent's
            self.stop()
            self._owner = os.getpid()
        if self._process is None or self._process.poll() is not None:
            self.stop()
            self._process = subprocess.Popen(
                self._argv, cwd=self._cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=git_env(cwd=self._cwd),
                bufsize=1 << 16,  # answers of many files are read in large pieces
            )
            self.started += 1
        return self._process

    def stop(self) -> None:
        """End the process: its pipes closed (it ends on its own), killed if it lingers; a
        forked child only lets go of its parent's."""
        process, self._process = self._process, None
        if process is None or self._owner != os.getpid():
            return
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_git(args: Sequence[str], *, cwd: Path, git_dir: Path | None = None,
            work_tree: Path | None = None, stdin: str | None = None,
            env: Mapping[str, str] | None = None, check: bool = True) -> str:
    """Run git and return stdout as text; a failure raises WorkspaceError with git's message."""
    done = git_process(args, cwd=cwd, git_dir=git_dir, work_tree=work_tree,
                       stdin=None if stdin is None else stdin.encode("utf-8"), env=env)
    if check and done.returncode != 0:
        command = " ".join(args[:3])
        raise WorkspaceError(
            f"`git {command}` failed in {cwd}: {done.stderr.decode(errors='replace').strip()[-800:]}",
            hint="check that the path is a git repository in a clean state",
            evidence={"exit_code": done.returncode},
        )
    return done.stdout.decode("utf-8", errors="surrogateescape")
