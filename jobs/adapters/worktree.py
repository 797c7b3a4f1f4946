"""A job's private checkout: its files, with HEAD and index in a private git directory beside it.

Edits, validation and commits happen here (jobs/adapters/workspace.py makes and keeps them). What
is staged is read by Stepwise itself (jobs/adapters/staging.py); a reset puts the files back at
the cost of what changed (jobs/adapters/worktree_restore.py) and starts from an empty directory
when anything about the kept files cannot be explained. Where sandboxed commands wrote apart and
Stepwise recorded its own writes (jobs/adapters/scratch.py), a reset checks only those paths.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from jobs.adapters import dir_scan, scratch, tree_fd
from jobs.adapters.git_identity import signed_off
from jobs.adapters.git_runner import git_process, run_git
from jobs.adapters.index_state import IndexState, found_renames, parse_patch_with_raw, stamps_of
from jobs.adapters.object_writer import write_blobs, write_object
from jobs.adapters.safe_paths import put_regular
from jobs.adapters.staging import (
    Change,
    clean_private,
    clean_worktree,
    collect_changes,
    index_info,
    remove_entry,
)
from jobs.adapters.tree_writer import build_tree
from jobs.adapters.worktree_restore import (
    STATUS_ARGS,
    STRICT_STAT,
    checkout_input,
    holds_blob,
    index_fixes,
    parse_ls_tree,
    parse_status,
    remove_untracked,
)
from jobs.basics.errors import WorkspaceError


class ObjectStore(Protocol):
    """What a worktree needs of its repository (jobs/adapters/workspace.py's `Repository`, which
    imports this module: a protocol keeps the two free of a cycle): where the objects live, and
    the trees and commits it wrote, remembered so a later step need not ask git."""

    git_dir: Path

    def tree_of(self, commit: str) -> str: ...

    def tree_object(self, tree: str) -> bytes | None: ...

    def remember_tree(self, tree: str, base: str, staged: dict[str, bytes | None]) -> None: ...

    def remember_commit(self, commit: str, tree: str, parent: str) -> None: ...

# More paths than this to put back one by one: the whole tree is proven instead.
WRITTEN_LIMIT = 2000
BOT_NAME = "Stepwise"
BOT_EMAIL = "stepwise-bot@users.noreply.localhost"


def identity_env(name: str, email: str) -> dict[str, str]:
    """The environment that makes git author and commit as `name <email>`."""
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}


# Local mode's identity; the server gives a repository the App's bot user
# (`repository.identity`, bot/server/identity.py).
BOT_IDENTITY = identity_env(BOT_NAME, BOT_EMAIL)


class Worktree:
    """The job's private checkout; edits, validation and commits happen here.

    `head` is the commit the files were last reset to: diffs are taken against it and it is
    the HEAD of the private git directory (for the few porcelain commands, e.g. `revert`)."""

    def __init__(self, repository: ObjectStore, path: Path, private: Path, *,
                 reset_to: str | None = None) -> None:
        self.repository = repository
        self._files = path
        self.private = private
        self._head = (private / "HEAD").read_text(encoding="utf-8").strip()
        # A kept worktree is reset to `reset_to` before anything sees its files or its index:
        # by its user's own first `reset` (each starts with one), or by the first look.
        self.pending: str | None = reset_to
        self.resets = 0  # how often the files were put back (a `setup` run is lost each time)
        self.index = IndexState.load(private / "index")  # what Stepwise's own writes made of it
        # The paths of the last staged read a tree was written from: (head, tree, paths).
        self.written_paths: tuple[str, str, list[str]] | None = None

    @property
    def path(self) -> Path:
        self._settle()
        return self._files

    @property
    def head(self) -> str:
        self._settle()
        return self._head

    def _settle(self) -> None:
        if self.pending is not None:
            self.reset(self.pending)

    def git(self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None,
            check: bool = True) -> str:
        self._settle()
        self.index.forget()  # any command may change the index
        scratch.forget(self.private)  # ... and the files (`revert`)
        return self._git(*args, stdin=stdin, env=env, check=check)

    def _git(self, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None,
             check: bool = True) -> str:
        self._settle()
        return run_git([*STRICT_STAT, *args], cwd=self._files, git_dir=self.private,
                       work_tree=self._files, stdin=stdin, env=env, check=check)

    def _process(self, args: Sequence[str], stdin: bytes | None = None,
                 env: Mapping[str, str] | None = None) -> tuple[int, bytes, str]:
        self._settle()
        done = git_process([*STRICT_STAT, *args], cwd=self._files, git_dir=self.private,
                           work_tree=self._files, stdin=stdin, env=env)
        return done.returncode, done.stdout, done.stderr.decode(errors="replace")

    def reset(self, sha: str) -> None:
        """Discard every change: the files are exactly `sha` again, and `sha` is the head."""
        self.pending = None
        self.restore(sha)
        if sha != self._head:  # a detached HEAD is just this file; no ref, no reflog, no hook
            staged = self.private / "HEAD.new"
            staged.write_text(f"{sha}\n", encoding="utf-8")
            staged.replace(self.private / "HEAD")
            self._head = sha

    def restore(self, tree: str) -> None:
        """Put the files back to `tree` (the head does not move): everything that is not in
        it goes, ignored files, planted `.git` entries and unfinished revert state included.

        What sandboxed commands wrote apart is dropped; when the record says Stepwise itself
        wrote only some paths since the files were last exactly the index's, only those are
        put back (jobs/adapters/scratch.py); otherwise the whole tree is proven by its stat
        data, as `git status` reads it."""
        self._settle()
        written = scratch.read(self.private)
        scratch.forget(self.private)  # until this restore ends, nothing is known
        scratch.clear(self.private)
        if written is not None:
            try:
                clean_private(self.private)
                self._restore_written(tree, written)
            except (WorkspaceError, OSError):
                written = None
        if written is None:
            try:  # a tree too deep for a path string (ENAMETOOLONG) starts from nothing too
                walked = clean_worktree(self._files, self.private)
                self._restore_changed(tree)
            except (WorkspaceError, OSError):
                self.restore_everything(tree)
            else:  # what the checkout changed is read again; the record vouches for the rest
                dir_scan.save(self.private, dir_scan.scan(self._files, walked))
        self.index.known(tree)
        scratch.exact(self.private)
        self.resets += 1

    def _fix_index(self, tree: str) -> list[str]:
        """Make the index `tree` again; the paths whose files must then be checked out. An
        index that Stepwise's own last write left at `tree` needs no diff
        (jobs/adapters/index_state.py)."""
        if self.index.holds(tree):
            fixes, checkout = b"", list[str]()
        else:
            code, raw, err = self._process(["diff-index", "--cached", "--raw", "-z",
                                            "--no-renames", tree])
            if code != 0:
                raise WorkspaceError(f"git diff-index failed: {err[-300:]}")
            fixes, checkout = index_fixes(raw)
        self.index.forget()
        if fixes:
            self._ok(self._process(["update-index", "-z", "--index-info"], fixes), "update-index")
        return checkout

    def _restore_written(self, tree: str, written: set[str]) -> None:
        """Put back only the paths Stepwise wrote and those whose index entries differ from
        `tree`: every other file is still exactly the index's (no command wrote into the
        files). A file that already holds `tree`'s bytes and mode (a batch's edit, reset to
        its own commit) is left; another is checked out again with its stat data in the
        index (`-u`), or removed when `tree` lacks it."""
        if self.index.holds(tree) and self.index.vouches_for(self._files, written):
            return  # each is the file Stepwise staged into `tree`, untouched since
        paths = sorted(set(self._fix_index(tree)) | written)
        if not paths:
            return
        if len(paths) > WRITTEN_LIMIT:
            raise WorkspaceError("too many paths to put back one by one")
        code, out, err = self._process(["--literal-pathspecs", "ls-tree", "-z", "--full-tree",
                                        tree, "--", *paths])
        if code != 0:
            raise WorkspaceError(f"git ls-tree failed: {err[-300:]}")
        entries = dict(parse_ls_tree(out))
        checkout = []
        for rel in paths:
            if rel not in entries:
                remove_untracked(self._files, rel)
                tree_fd.remove_empty_parents(self._files, rel)
            elif not holds_blob(self._files, rel, *entries[rel]):
                checkout.append(rel)
        if checkout:
            self._ok(self._process(["checkout-index", "--force", "-u", "-z", "--stdin"],
                                   checkout_input(checkout)), "checkout-index")

    def _restore_changed(self, tree: str) -> None:
        """Remove and check out only what differs from `tree`: the index entries an attempt
        staged (or another head had), files whose stat data or mode differ from the index,
        and whatever is not tracked."""
        checkout = self._fix_index(tree)
        # The one status that may write the index back: the stat data of entries it had to
        # compare by content (just checked out, or staged) is then kept for the next reset.
        code, out, err = self._process(STATUS_ARGS, env={"GIT_OPTIONAL_LOCKS": "1"})
        if code != 0:
            raise WorkspaceError(f"git status failed: {err[-300:]}")
        changed, untracked = parse_status(out)
        for rel in untracked:
            remove_untracked(self._files, rel)
        checkout += changed
        if checkout:
            self._ok(self._process(["checkout-index", "--force", "-z", "--stdin"],
                                   checkout_input(checkout)), "checkout-index")

    def restore_everything(self, tree: str) -> None:
        """Start from an empty directory and an empty index: check out the whole of `tree`."""
        dir_scan.forget(self.private)
        for entry in self._files.iterdir():
            remove_entry(entry)
        self.index.forget()
        (self.private / "index").unlink(missing_ok=True)
        self._git("read-tree", "--reset", "-u", tree)
        self.index.known(tree)
        scratch.exact(self.private)

    @staticmethod
    def _ok(done: tuple[int, bytes, str], what: str) -> None:
        if done[0] != 0:
            raise WorkspaceError(f"git {what} failed: {done[2][-300:]}")

    def stage_all(self) -> None:
        """Stage every change in the files, read by Stepwise itself (see jobs/adapters/staging.py)."""
        scratch.forget(self.private)  # anything may have written them: the next reset proves all
        self.stage(self._candidates())

    def stage_files(self, paths: Iterable[str]) -> None:
        """Stage `paths`: called only when nothing but Stepwise's own writes to them changed
        the files since the last reset (else `stage_all`), so they are what the next reset
        puts back (jobs/adapters/scratch.py)."""
        listed = list(paths)
        scratch.add(self.private, set(listed))
        self.stage(listed)

    def stage(self, paths: Sequence[str]) -> None:
        """Stage `paths` as the files hold them. What sandboxed commands wrote apart goes
        first: the next command sees the staged files, and a `setup` runs again."""
        if scratch.clear(self.private):
            self.resets += 1
        changes = collect_changes(self.path, paths)
        if not changes:
            return
        trusted = self.index.trusted()
        stamps = stamps_of(self._files, (change.path for change in changes)) if trusted else {}
        blobs = self._write_blobs([c for c in changes if c.data is not None])
        self.index.staged_read = None
        code, _, err = self._process(["update-index", "-z", "--index-info"],
                                     index_info(changes, blobs))
        if code != 0:
            self.index.forget()
            raise WorkspaceError(f"git update-index failed: {err[-500:]}")
        if trusted:
            self.index.changed(
                {change.path: change.data for change in changes},
                {change.path: None if change.data is None else (change.mode, blobs[change.path])
                 for change in changes},
                stamps)
        else:
            self.index.forget()

    def _candidates(self) -> list[str]:
        """Tracked files changed in the files, and untracked ones (git's ignore rules apply;
        an untracked directory holding a `.git` is listed as `dir/`)."""
        out = self._git("-c", "core.quotepath=false", "status", "--porcelain=v1", "-z",
                       "--untracked-files=all", "--ignore-submodules=all", "--no-renames")
        # Each entry is "XY path": Y is the files against the index, "??" an untracked path.
        return [entry[3:] for entry in out.split("\0")
                if len(entry) > 3 and (entry[1] != " " or entry[:2] == "??")]

    def _write_blobs(self, changes: Sequence[Change]) -> dict[str, str]:
        """Each change's content as a blob (no filters, no attributes): path -> object id.

        The bytes are the ones Stepwise read, written as loose objects by Stepwise itself
        (jobs/adapters/object_writer.py); where it cannot (not SHA-1 object names), several go
        through copies in a private temporary directory so that one git process writes them."""
        if not changes:
            return {}
        written = write_blobs(self.repository.git_dir / "objects",
                              [change.data or b"" for change in changes],
                              sha1=len(self._head) == 40)
        if written is not None:
            return {change.path: oid for change, oid in zip(changes, written, strict=True)}
        with tempfile.TemporaryDirectory(prefix="stepwise-blobs-") as tmp:
            copies = []
            for number, change in enumerate(changes):
                copy = Path(tmp, str(number))
                copy.write_bytes(change.data or b"")
                copies.append(str(copy))
            code, out, err = self._process(["hash-object", "-w", "--no-filters",
                                            "--stdin-paths"], "\n".join(copies).encode())
        oids = out.decode().split()
        if code != 0 or len(oids) != len(changes):
            raise WorkspaceError(f"git hash-object failed: {err[-300:]}")
        return {change.path: oid for change, oid in zip(changes, oids, strict=True)}

    def staged_diff(self) -> str:
        """The staged change against the head, exactly as git printed it (never stripped).

        Prefixes are fixed so a user's `diff.noprefix`/`diff.mnemonicPrefix` cannot change the
        headers; undecodable bytes survive as surrogates instead of failing the read.
        """
        return self._staged()[1]

    def put_file(self, path: str, data: bytes) -> None:
        """Write Stepwise's own file `path` (made with its missing folders), never through a
        link: a parent or the file that is a link or not what it should be is refused
        (safe_paths.put_regular; the change note is written outside the sandbox)."""
        put_regular(self.path, path, data)

    def staged_paths(self) -> list[str]:
        """Every path the staged change touches (both sides of a rename), sorted."""
        return list(self._staged()[0])

    def _staged(self) -> tuple[list[str], str]:
        """The staged paths and diff from one git call, kept until the index changes."""
        head = self.head
        if self.index.staged_read is not None and self.index.trusted():
            return self.index.staged_read
        code, out, err = self._process(
            ["-c", "core.quotepath=false", "diff", "--cached", "-M", "--patch-with-raw", "-z",
             "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
             "--dst-prefix=b/", head])
        if code != 0:
            raise WorkspaceError(f"git diff failed: {err[-500:]}")
        paths, patch = parse_patch_with_raw(out)
        read = (paths, patch.decode("utf-8", errors="surrogateescape"))
        if self.index.trusted():
            self.index.staged_read = read
        return read

    def write_tree(self) -> str:
        """The index as a tree; a tree written from a known index is built by Stepwise from its
        base and the staged entries (jobs/adapters/tree_writer.py), and told to the repository
        with the bytes that differ from its base, so reading its files needs no git call."""
        known = self.index.trusted()
        base, staged, read = self.index.base, dict(self.index.staged), self.index.staged_read
        tree = self._built_tree(base) if known and base is not None else None
        if tree is None:
            tree = self._git("write-tree").strip()  # may write the index (its cache tree)
        if known and base is not None:
            self.repository.remember_tree(tree, base, staged)
            self.index.known(tree, written=True)
            if read is not None:
                self.index.written_diff = (self._head, tree, read[1])
                self.written_paths = (self._head, tree, list(read[0]))
        else:
            self.index.forget()
        return tree

    def _built_tree(self, base: str) -> str | None:
        """The tree `git write-tree` would write from the index (its `base` and the entries
        staged since), written by Stepwise; None when git must write it."""
        entries, objects = self.index.entries, self.repository.git_dir / "objects"
        if len(self._head) != 40 or entries.keys() != self.index.staged.keys() \
                or objects.is_symlink() or not objects.is_dir():
            return None
        return build_tree(self.repository.tree_of(base), entries, self.repository.tree_object,
                          lambda body: write_object(objects, b"tree", body))

    def diff_written(self, parent: str, tree: str) -> str | None:
        """The diff from `parent` to `tree` as `git diff --no-renames` prints it, when it is the
        staged diff this worktree read just before writing `tree` on `parent` and that found
        no rename (the same text); None otherwise (ask git)."""
        written = self.index.written_diff
        if written is None or written[:2] != (parent, tree) or found_renames(written[2]):
            return None
        return written[2]

    def paths_written(self, parent: str, tree: str) -> list[str] | None:
        """The paths that differ between `parent` and `tree` (both sides of a rename), when
        `tree` was written here from the staged change this worktree read against `parent`;
        None otherwise (ask git). Trees never change, so the answer holds for good."""
        written = self.written_paths
        return list(written[2]) if written is not None and written[:2] == (parent, tree) \
            else None

    def revert(self, commit: str) -> None:
        """Stage the inverse of `commit` in the files and the index (`git revert --no-commit`);
        WorkspaceError when it does not apply cleanly (the files are then left as git left
        them: reset them)."""
        self.git("revert", "--no-commit", commit, env=BOT_IDENTITY)

    def head_tree(self) -> str:
        return self._git("rev-parse", f"{self.head}^{{tree}}").strip()

    def merged_tree(self, other: str) -> str | None:
        """The tree of the head merged with `other` (nothing is written to the files), or None
        when they conflict."""
        code, out, _ = self._process(["merge-tree", "--write-tree", "--no-messages",
                                      self.head, other])
        return out.decode().split("\n", 1)[0].strip() if code == 0 else None

    def commit_tree(self, tree: str, parent: str, message: str) -> str:
        """A commit of exactly `tree` on `parent` (no hooks run, nothing else is included)."""
        commit = self._git("commit-tree", tree, "-p", parent, "-F", "-",
                           stdin=signed_off(message, self.repository),
                           env=getattr(self.repository, "identity", BOT_IDENTITY)).strip()
        self.repository.remember_commit(commit, tree, parent)
        if self.index.holds(tree):
            self.index.now_commit(commit)  # the same tree: a reset to it needs no diff
        return commit

    def checkout(self, sha: str) -> None:
        self.reset(sha)

    def untracked_entries(self) -> list[str]:
        """The top-most paths git does not track, ignored ones included (`.venv/`,
        `node_modules/`, `build/`): what a setup made; a directory ends with `/`."""
        out = self._git("-c", "core.quotepath=false", "ls-files", "-z", "--others",
                       "--directory", "--no-empty-directory")
        return [name for name in out.split("\0") if name]

    def remove(self) -> None:
        self.pending = None
        self.index.forget()
        scratch.drop(self.private)
        for path in (self._files, self.private):  # at any depth a command left (tree_fd.py)
            with contextlib.suppress(OSError):
                remove_entry(path)
