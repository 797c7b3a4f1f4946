"""Git behind a small interface: the user's repository, the job branch and the job's own worktree.

Every call names its repository (jobs/adapters/git_runner.py); nothing here changes the user's checkout or
current branch. Branch updates are compare-and-set (`git update-ref NEW OLD`): never forced,
never amended. A job's worktree holds no git metadata at all: its HEAD and index live in a
private git directory beside it, out of the sandbox's reach, and what is staged from it is
read by Stepwise itself (regular files only) and written with `hash-object --no-filters`.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.adapters import tree_fd
from jobs.adapters.git_identity import commit_identity, no_identity_error
from jobs.adapters.git_runner import git_process, run_git
from jobs.adapters.index_state import KnownTrees
from jobs.adapters.known_commits import KnownCommits
from jobs.adapters.object_reader import ObjectReader
from jobs.adapters.ref_updates import RefUpdater
from jobs.adapters.worktree import BOT_EMAIL, BOT_IDENTITY, BOT_NAME, Worktree
from jobs.basics.errors import WorkspaceError
from jobs.ports import Authorship, Commit

__all__ = ["BOT_EMAIL", "BOT_IDENTITY", "BOT_NAME", "CommitInfo", "Repository",
           "WithdrawRefusedError", "Worktree", "run_git"]

ZERO_SHA = "0" * 40


class WithdrawRefusedError(WorkspaceError):
    """The branch is no longer at the candidate to withdraw (someone pushed on top of it)."""

    code = "withdraw_refused"


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    trailers: dict[str, str]
    tree: str = ""
    committer_email: str = ""

    @property
    def reverted_sha(self) -> str | None:
        """The commit this one reverts, from git's "This reverts commit X." line."""
        marker = "This reverts commit "
        for line in self.body.splitlines():
            if line.startswith(marker):
                return line[len(marker) :].rstrip(".").strip() or None
        return None


class Repository:
    """A repository addressed by path: the user's checkout, or a bare clone (server mode)."""

    def __init__(self, path: Path) -> None:
        path = path.resolve()
        if not path.is_dir():
            raise WorkspaceError(
                f"{path} is not a directory", hint="pass --repo with a git checkout's path",
                code="not_a_repository",
            )
        # The one discovery Stepwise makes, once, from the directory the user named (a bare
        # clone is named directly); every later call names the git directory found here.
        bare_dir = (path / "HEAD").is_file() and (path / "objects").is_dir()
        upward = {"GIT_CEILING_DIRECTORIES": ""}  # --repo may name a subdirectory
        found = run_git(["rev-parse", "--path-format=absolute", "--is-bare-repository",
                         "--absolute-git-dir", "--git-common-dir"], cwd=path, check=False,
                        git_dir=path if bare_dir else None, env=upward).split("\n")
        top = "" if bare_dir or found[0] != "false" else \
            run_git(["rev-parse", "--show-toplevel"], cwd=path, check=False, env=upward).strip()
        if len(found) < 3 or not found[1] or (found[0] == "false" and not top):
            raise WorkspaceError(
                f"{path} is not inside a git repository",
                hint="pass --repo with a git checkout's path (run `git init` first for a new one)",
                code="not_a_repository",
            )
        self.bare = found[0] == "true"
        self.root = Path(top) if top else path
        self.checkout_git_dir = Path(found[1])  # HEAD of the user's checkout (maybe linked)
        self.git_dir = Path(found[2]).resolve()  # the common directory: objects, refs, config
        self.state_dir = self.git_dir / "stepwise"
        self.known_trees = KnownTrees()  # written by this process's worktrees
        self.known_commits = KnownCommits()  # and the commits they made
        self.identity = dict(BOT_IDENTITY)  # who authors and commits (the server: its bot user)
        self.signoff = False  # local mode's `signoff`: a Signed-off-by line on every commit
        # Refs, trees and files read through one long-lived git (jobs/adapters/object_reader.py)
        self.objects = ObjectReader(cwd=self.root, git_dir=self.checkout_git_dir)
        # and the branch's moves through one long-lived `update-ref --stdin`
        self.refs = RefUpdater(cwd=self.root, git_dir=self.checkout_git_dir, objects=self.objects)
        weakref.finalize(self, _close_all, self.objects, self.refs)

    def close(self) -> None:
        """End the long-lived git processes (the job's step is over; a later call starts them
        again)."""
        _close_all(self.objects, self.refs)

    def commit_as_its_user(self, *, signoff: bool = False) -> None:
        """Commit as the person whose checkout this is, author and committer, as `git commit`
        would (jobs/adapters/git_identity.py); with `signoff`, every message ends with their
        `Signed-off-by:`. Raises BadInputError naming the fix when git has no identity."""
        identity = commit_identity(cwd=self.root, git_dir=self.checkout_git_dir)
        if identity is None:
            raise no_identity_error()
        self.identity, self.signoff = identity, signoff

    def git(self, *args: str, check: bool = True) -> str:
        return run_git(args, cwd=self.root, git_dir=self.checkout_git_dir,
                       work_tree=None if self.bare else self.root, check=check)

    def _process(self, args: Sequence[str], stdin: bytes | None = None) -> tuple[int, bytes, str]:
        done = git_process(args, cwd=self.root, git_dir=self.checkout_git_dir, stdin=stdin)
        return done.returncode, done.stdout, done.stderr.decode(errors="replace")

    def current_branch(self) -> str | None:
        name = self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
        return name or None

    def resolve(self, ref: str) -> str | None:
        """The commit `ref` names now (asked of git each time: anyone may move a branch)."""
        if not self.objects.askable(ref):
            return None  # no ref name holds a line break
        found = self.objects.info(f"{ref}^{{commit}}")
        return found.oid if found is not None else None

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
        """File contents at `sha` (None for binary or non-UTF-8 files), from the long-lived
        reader; a tree one of this repository's worktrees wrote is read from the bytes it staged."""
        paths = list(paths)
        known = self.known_trees.lookup(sha)
        if known is not None:
            base, staged = known
            texts = {path: None if staged[path] is None else _decode_text(staged[path] or b"")
                     for path in paths if path in staged}
            rest = [path for path in paths if path not in staged]
            return {**texts, **(self.read_texts(base, rest) if rest else {})}
        # A line break cannot be asked of the reader: such (rare) names are read one by one.
        result: dict[str, str | None] = {
            path: self._read_one(sha, path) for path in paths if not self.objects.askable(path)
        }
        wanted = [path for path in paths if path not in result]
        for path, found in zip(wanted, self.objects.contents([f"{sha}:{path}" for path in wanted]),
                               strict=True):
            result[path] = _decode_text(found.data or b"") \
                if found is not None and found.type == "blob" else None
        return result

    def changes(self, old: str | None, new: str) -> dict[str, str]:
        """Each path whose entry differs between `old` and `new` (commits or trees) with its
        status letter (A, M, D, T; a rename is its two paths), in git's order; `old` None:
        `new` against its first parent (a root commit: every file added)."""
        sides = [old, new] if old is not None else \
            ["--root", "--diff-merges=first-parent", new]
        out = self.git("-c", "core.quotepath=false", "diff-tree", "-r", "--no-renames",
                       "--no-commit-id", "--name-status", "-z", *sides)
        fields = [field for field in out.split("\0") if field]
        return dict(zip(fields[1::2], (status[:1] for status in fields[::2]), strict=False))

    def diff_text(self, old: str, new: str) -> str:
        """The unified diff from `old` to `new` (paths unquoted, no renames, no external diff
        or textconv driver: attributes in the tree never choose a program)."""
        return self.git("-c", "core.quotepath=false", "diff", "--no-ext-diff", "--no-textconv",
                        "--no-color", "--no-renames", old, new)

    def merge_base(self, one: str, other: str) -> str | None:
        """The best common ancestor of two commits, or None (unrelated, or not commits)."""
        return self.git("merge-base", one, other, check=False).strip() or None

    def branches(self, *patterns: str) -> list[str]:
        """The local branches matching `for-each-ref` patterns under refs/heads/ (a name, or a
        glob such as `stepwise/issue-4-*`), sorted."""
        out = self.git("for-each-ref", "--format=%(refname:short)",
                       *(f"refs/heads/{pattern}" for pattern in patterns))
        return out.split()

    def names_in(self, commit: str, folder: str) -> list[str]:
        """The names of the entries of `folder` at `commit` ([] when there is no such folder)."""
        out = self.git("-c", "core.quotepath=false", "ls-tree", "--name-only", "-z",
                       f"{commit}:{folder}", check=False)
        return [name for name in out.split("\0") if name]

    def authorship(self, sha: str) -> Authorship:
        """Who wrote commit `sha`, its subject and its parents."""
        parents, name, email, subject = self.git(
            "show", "-s", "--format=%P%x00%an%x00%ae%x00%s", sha).rstrip("\n").split("\x00", 3)
        return Authorship(parents=tuple(parents.split()), name=name, email=email,
                          subject=subject)

    def describe(self, sha: str) -> str:
        """`git describe --tags --long` of `sha` (`v1.2-3-gabc1234`), or "" without a tag."""
        out = self.git("describe", "--tags", "--long", "--abbrev=7", sha, check=False)
        line = out.strip().splitlines()[0] if out.strip() else ""
        return line if line.rsplit("-", 2)[-1].startswith("g") else ""

    def remember_tree(self, tree: str, base: str, staged: dict[str, bytes | None]) -> None:
        """`tree` is `base` with `staged` (path -> bytes, None for a removal) in place."""
        self.known_trees.remember(tree, base, staged)

    def remember_commit(self, commit: str, tree: str, parent: str) -> None:
        self.known_trees.alias(commit, tree)
        self.known_commits.remember(commit, tree, parent)

    def tree_of(self, commit: str) -> str:
        """The tree of `commit` (a commit this process wrote is answered from memory)."""
        known = self.known_commits.tree_of(commit)
        if known is not None:
            return known
        found = self.objects.info(f"{commit}^{{tree}}") if self.objects.askable(commit) \
            else None
        if found is None:
            raise WorkspaceError(f"`{commit[:40]}` names no commit or tree in {self.root}",
                                 hint="check that the path is a git repository in a clean state")
        return found.oid

    def tree_object(self, tree: str) -> bytes | None:
        """The raw bytes of the tree object `tree`; None when it is no tree here."""
        found = self.objects.contents([tree])[0]
        return found.data if found is not None and found.type == "tree" else None

    def _read_one(self, sha: str, path: str) -> str | None:
        code, data, _ = self._process(["cat-file", "blob", f"{sha}:{path}"])
        return _decode_text(data) if code == 0 else None

    def grep_files(self, sha: str, literals: Sequence[str]) -> set[str] | None:
        """Files at `sha` containing any of the fixed strings (text files only); None if git
        could not say."""
        args = ["-c", "core.quotepath=false", "grep", "-F", "-l", "-z", "-I", "--no-color",
                "--no-textconv"]
        for literal in literals:
            args += ["-e", literal]
        code, out, _ = self._process([*args, sha])
        if code not in (0, 1):
            return None
        prefix = f"{sha}:"
        names = out.decode("utf-8", errors="surrogateescape").split("\0")
        return {name.removeprefix(prefix) for name in names if name}

    def show_file(self, sha: str, path: str) -> str | None:
        return self.read_texts(sha, [path]).get(path)

    def create_branch(self, branch: str, sha: str) -> None:
        self.git("update-ref", f"refs/heads/{branch}", sha, ZERO_SHA)

    def drop_branch(self, branch: str, sha: str) -> None:
        """Delete `branch` if it is still at `sha` (a job's branch that never got a commit)."""
        self.git("update-ref", "-d", f"refs/heads/{branch}", sha)

    def advance_branch(self, branch: str, new: str, old: str) -> str:
        """Move `branch` from `old` to `new`; fails if someone moved it meanwhile. Returns the
        sha the branch landed on (here `new`; server mode's API commits get a sha of their own)."""
        self.refs.update(f"refs/heads/{branch}", new, old)
        return new

    def withdraw(self, branch: str, candidate: str, to: str) -> None:
        """Move `branch` back from its own `candidate` tip to `to` (the candidate's parent), only
        while the branch is exactly at `candidate`: the one rewrite Stepwise makes, of a commit
        the repository's CI rejected. Raises WithdrawRefusedError when the branch moved."""
        if self.branch_head(branch) != candidate:
            raise WithdrawRefusedError(
                f"`{branch}` is no longer at `{candidate[:7]}`, so it is not withdrawn",
                hint="someone pushed on top of it; Stepwise never rewrites their work")
        self.git("update-ref", f"refs/heads/{branch}", to, candidate)

    def commits(self, base: str, head: str, *, exclude: Sequence[str] = ()) -> list[CommitInfo]:
        """Commits reachable from `head` and not from `base` (nor `exclude`), oldest first."""
        fmt = "%H%x00%P%x00%T%x00%ce%x00%s%x00%(trailers:only,unfold)%x00%b%x1e"
        out = self.git("log", "--reverse", f"--format={fmt}", f"{base}..{head}",
                       *(f"^{sha}" for sha in exclude))
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            sha, parents, tree, email, subject, trailer_text, body = record.split("\x00", 6)
            trailers = {}
            for line in trailer_text.splitlines():
                key, sep, value = line.partition(":")
                if sep:
                    trailers[key.strip()] = value.strip()
            commits.append(
                CommitInfo(sha, tuple(parents.split()), subject, body, trailers, tree, email)
            )
        return commits

    def own_commits(self, commits: Sequence[Commit], *,
                    made: Collection[str] | None = None) -> frozenset[str]:
        """Which of `commits` Stepwise made. `made`: the ids of the commits it made to land,
        recorded before each landed; a commit made with git carries no proof of its maker, so
        only those are its own (a copy of its identity, trailers and tree is someone else's).
        None (a record that holds none): committed as this repository's identity (locally the
        person's own, so the recorded tree decides, jobs/decisions/reconcile.py). (The server's
        mirror asks GitHub whether it signed them instead, bot/github/mirror.py.)"""
        if made is not None:
            return frozenset(c.sha for c in commits if c.sha in made)
        email = self.identity.get("GIT_COMMITTER_EMAIL", "")
        return frozenset(c.sha for c in commits if email and c.committer_email == email)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        if self.known_commits.is_ancestor(ancestor, descendant):
            return True
        return self._process(["merge-base", "--is-ancestor", ancestor, descendant])[0] == 0

    def open_worktree(self, path: Path, sha: str, *, keep: bool = False) -> Worktree:
        """A worktree at `sha`: with `keep`, the one this repository left at `path` (a job's,
        kept between its steps) reset to `sha` at the cost of what changed, before anything
        sees it (its user's first `reset(sha)` is that reset); otherwise, or when there is none
        that this repository made, a fresh one replacing whatever is at `path`.

        The directory holds only the tree's files; its HEAD and index live in `<path>.git`,
        a private git directory whose `commondir` is this repository's."""
        private = path.with_name(f"{path.name}.git")
        if keep and self.holds_worktree(path):
            return Worktree(self, path, private, reset_to=sha)
        for stale in (path, private):  # a repository's tree, any depth: never recursion
            tree_fd.discard(stale)
        self.git("worktree", "prune", check=False)  # registrations of the old layout
        path.mkdir(parents=True)
        private.mkdir()
        (private / "commondir").write_text(f"{self.git_dir}\n", encoding="utf-8")
        (private / "HEAD").write_text(f"{sha}\n", encoding="utf-8")
        worktree = Worktree(self, path, private)
        worktree.restore_everything(sha)
        worktree.resets += 1
        return worktree

    def holds_worktree(self, path: Path) -> bool:
        """Whether `path` is a worktree this repository made whose private index can be
        trusted: real directories (no link), `commondir` naming this repository, a HEAD and
        an index. The private directory is out of every sandbox's reach, so its index says
        what the files were when Stepwise last wrote them; a reset that finds it unreadable
        starts from an empty directory."""
        private = path.with_name(f"{path.name}.git")
        try:
            if path.is_symlink() or private.is_symlink() or not path.is_dir():
                return False
            common = (private / "commondir").read_text(encoding="utf-8").strip()
            head = (private / "HEAD").read_text(encoding="utf-8").strip()
            index = (private / "index").lstat()
        except OSError:
            return False
        return Path(common) == self.git_dir and len(head) == 40 and index.st_size > 0 \
            and not (private / "index.lock").exists()


def _close_all(objects: ObjectReader, refs: RefUpdater) -> None:
    objects.close()
    refs.close()


def _decode_text(blob: bytes) -> str | None:
    if b"\0" in blob[:8192]:
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None
