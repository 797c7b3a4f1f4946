"""Git behind a small interface: the user's repository, the job branch and the job's own worktree.

Every call passes an explicit `cwd`; nothing here changes the user's checkout or current branch.
Branch updates are compare-and-set (`git update-ref NEW OLD`): never forced, never amended.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.errors import WorkspaceError

BOT_NAME = "Stepwise"
BOT_EMAIL = "stepwise-bot@users.noreply.localhost"
ZERO_SHA = "0" * 40
_SCRUBBED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    trailers: dict[str, str]

    @property
    def reverted_sha(self) -> str | None:
        """The commit this one reverts, from git's "This reverts commit X." line."""
        marker = "This reverts commit "
        for line in self.body.splitlines():
            if line.startswith(marker):
                return line[len(marker) :].rstrip(".").strip() or None
        return None


def _git_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(args: Sequence[str], *, cwd: Path, stdin: str | None = None,
            env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run git and return stdout; a failure raises WorkspaceError with git's message."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True,
        env=env or _git_env(), check=False,
    )
    if check and done.returncode != 0:
        command = " ".join(args[:3])
        raise WorkspaceError(
            f"`git {command}` failed in {cwd}: {done.stderr.strip()[-800:]}",
            hint="check that the path is a git repository in a clean state",
            evidence={"exit_code": done.returncode},
        )
    return done.stdout


class Repository:
    """A repository addressed by path: the user's checkout, or a bare clone (server mode)."""

    def __init__(self, path: Path) -> None:
        path = path.resolve()
        if not path.is_dir():
            raise WorkspaceError(
                f"{path} is not a directory", hint="pass --repo with a git checkout's path",
                code="not_a_repository",
            )
        bare = run_git(["rev-parse", "--is-bare-repository"], cwd=path, check=False).strip()
        top = str(path) if bare == "true" else \
            run_git(["rev-parse", "--show-toplevel"], cwd=path, check=False).strip()
        if not top:
            raise WorkspaceError(
                f"{path} is not inside a git repository",
                hint="pass --repo with a git checkout's path (run `git init` first for a new one)",
                code="not_a_repository",
            )
        self.root = Path(top)
        common = run_git(["rev-parse", "--git-common-dir"], cwd=self.root).strip()
        self.git_dir = (self.root / common).resolve()
        self.state_dir = self.git_dir / "stepwise"

    def git(self, *args: str, check: bool = True) -> str:
        return run_git(args, cwd=self.root, check=check)

    def current_branch(self) -> str | None:
        name = self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
        return name or None

    def resolve(self, ref: str) -> str | None:
        sha = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return sha.strip() or None

    def branch_head(self, branch: str) -> str | None:
        return self.resolve(f"refs/heads/{branch}")

    def tracked_files(self, sha: str) -> list[str]:
        out = self.git("-c", "core.quotepath=false", "ls-tree", "-r", "-z", "--name-only", sha)
        return [name for name in out.split("\0") if name]

    def tracked_modes(self, sha: str) -> dict[str, str]:
        """Every tracked path at `sha` with its `git ls-tree` mode (100644, 120000, 160000, ...)."""
        out = self.git("-c", "core.quotepath=false", "ls-tree", "-r", "-z", sha)
        modes: dict[str, str] = {}
        for entry in out.split("\0"):
            meta, tab, name = entry.partition("\t")
            if tab:
                modes[name] = meta.split(" ", 1)[0]
        return modes

    def read_texts(self, sha: str, paths: Iterable[str]) -> dict[str, str | None]:
        """File contents at `sha` (None for binary or non-UTF-8 files), in one git call."""
        paths = list(paths)
        # A newline would split the line-based request: such (rare) names are read one by one.
        result: dict[str, str | None] = {
            path: self._read_one(sha, path) for path in paths if "\n" in path
        }
        wanted = [path for path in paths if "\n" not in path]
        if not wanted:
            return result
        request = "".join(f"{sha}:{path}\n" for path in wanted).encode()
        done = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=self.root, input=request,
            capture_output=True, env=_git_env(), check=False,
        )
        if done.returncode != 0:
            raise WorkspaceError(f"git cat-file failed: {done.stderr.decode()[-500:]}")
        data, offset = done.stdout, 0
        for path in wanted:
            header_end = data.index(b"\n", offset)
            header = data[offset:header_end]
            # "<object> missing" (the object name may contain spaces) or "<sha> <type> <size>".
            if header.endswith((b" missing", b" ambiguous")):
                result[path] = None
                offset = header_end + 1
                continue
            size = int(header.rsplit(b" ", 1)[1])
            blob = data[header_end + 1 : header_end + 1 + size]
            offset = header_end + 1 + size + 1
            result[path] = _decode_text(blob)
        return result

    def _read_one(self, sha: str, path: str) -> str | None:
        done = subprocess.run(["git", "cat-file", "blob", f"{sha}:{path}"], cwd=self.root,
                              capture_output=True, env=_git_env(), check=False)
        return _decode_text(done.stdout) if done.returncode == 0 else None

    def grep_files(self, sha: str, literals: Sequence[str]) -> set[str] | None:
        """Files at `sha` containing any of the fixed strings (text files only); None if git
        could not say."""
        args = ["git", "-c", "core.quotepath=false", "grep", "-F", "-l", "-z", "-I",
                "--no-color"]
        for literal in literals:
            args += ["-e", literal]
        done = subprocess.run([*args, sha], cwd=self.root, capture_output=True,
                              env=_git_env(), check=False)
        if done.returncode not in (0, 1):
            return None
        prefix = f"{sha}:"
        names = done.stdout.decode("utf-8", errors="surrogateescape").split("\0")
        return {name.removeprefix(prefix) for name in names if name}

    def show_file(self, sha: str, path: str) -> str | None:
        return self.read_texts(sha, [path]).get(path)

    def create_branch(self, branch: str, sha: str) -> None:
        self.git("update-ref", f"refs/heads/{branch}", sha, ZERO_SHA)

    def advance_branch(self, branch: str, new: str, old: str) -> None:
        """Move `branch` from `old` to `new`; fails if someone moved it meanwhile."""
        self.git("update-ref", f"refs/heads/{branch}", new, old)

    def commits(self, base: str, head: str) -> list[CommitInfo]:
        """Commits reachable from `head` and not from `base`, oldest first."""
        fmt = "%H%x00%P%x00%s%x00%(trailers:only,unfold)%x00%b%x1e"
        out = self.git("log", "--reverse", f"--format={fmt}", f"{base}..{head}")
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, parents, subject, trailer_text, body = record.split("\x00", 4)
            trailers = {}
            for line in trailer_text.splitlines():
                key, sep, value = line.partition(":")
                if sep:
                    trailers[key.strip()] = value.strip()
            commits.append(
                CommitInfo(sha, tuple(parents.split()), subject, body, trailers)
            )
        return commits

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", ancestor, descendant], cwd=self.root,
            capture_output=True, env=_git_env(), check=False,
        )
        return done.returncode == 0

    def open_worktree(self, path: Path, sha: str) -> Worktree:
        """A fresh detached worktree at `sha`, replacing any stale one left at `path`."""
        if path.exists():
            self.git("worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
        self.git("worktree", "prune")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.git("worktree", "add", "--detach", "--quiet", str(path), sha)
        return Worktree(self, path)


def _decode_text(blob: bytes) -> str | None:
    if b"\0" in blob[:8192]:
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


class Worktree:
    """The job's private checkout; edits, validation and commits happen here."""

    def __init__(self, repository: Repository, path: Path) -> None:
        self.repository = repository
        self.path = path

    def git(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> str:
        return run_git(args, cwd=self.path, stdin=stdin, env=env, check=check)

    def reset(self, sha: str) -> None:
        """Discard every change: the tree is exactly `sha` again (ignored files are kept)."""
        self.git("reset", "--hard", "--quiet", sha)
        self.git("clean", "-fdq")

    def stage_all(self) -> None:
        self.git("add", "-A")

    def staged_diff(self) -> str:
        """The staged change against HEAD, exactly as git printed it (never stripped).

        Prefixes are fixed so a user's `diff.noprefix`/`diff.mnemonicPrefix` cannot change the
        headers; undecodable bytes survive as surrogates instead of failing the read.
        """
        done = subprocess.run(
            ["git", "-c", "core.quotepath=false", "diff", "--cached", "-M", "--no-color",
             "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", "HEAD"],
            cwd=self.path, capture_output=True, env=_git_env(), check=False,
        )
        if done.returncode != 0:
            raise WorkspaceError(f"git diff failed: {done.stderr.decode(errors='replace')[-500:]}")
        return done.stdout.decode("utf-8", errors="surrogateescape")

    def staged_paths(self) -> list[str]:
        out = self.git("-c", "core.quotepath=false", "diff", "--cached", "--name-only", "-z",
                       "--no-renames", "HEAD")
        return [name for name in out.split("\0") if name]

    def write_tree(self) -> str:
        return self.git("write-tree").strip()

    def commit_tree(self, tree: str, parent: str, message: str) -> str:
        """A commit of exactly `tree` on `parent` (no hooks run, nothing else is included)."""
        env = _git_env()
        env.update(
            GIT_AUTHOR_NAME=BOT_NAME, GIT_AUTHOR_EMAIL=BOT_EMAIL,
            GIT_COMMITTER_NAME=BOT_NAME, GIT_COMMITTER_EMAIL=BOT_EMAIL,
        )
        return self.git("commit-tree", tree, "-p", parent, "-F", "-", stdin=message,
                        env=env).strip()

    def checkout(self, sha: str) -> None:
        self.git("checkout", "--detach", "--quiet", "--force", sha)

    def changed_tracked_files(self) -> list[str]:
        out = self.git("-c", "core.quotepath=false", "status", "--porcelain", "-z",
                       "--untracked-files=no")
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

    def remove(self) -> None:
        self.repository.git("worktree", "remove", "--force", str(self.path), check=False)
        shutil.rmtree(self.path, ignore_errors=True)
        self.repository.git("worktree", "prune", check=False)
