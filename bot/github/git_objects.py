"""The local commit as the Git Data API needs it (part of the GitHub adapter): its tree, parents,
author and message read with git; what changes from its parent's tree, file by file; which blobs
GitHub has already (its parents hold them) and the bytes of those it lacks; the message that
credits a person who authored it; and GitHub's limit on a blob's size, checked before upload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from jobs.adapters.git_runner import git_process
from jobs.adapters.workspace import Repository
from jobs.adapters.worktree import BOT_EMAIL
from jobs.basics.github_limits import BLOB_BYTES

WORKFLOWS_DIR = ".github/workflows"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class LocalCommit:
    tree: str
    parents: tuple[str, ...]
    author: tuple[str, str, datetime]
    message: str


@dataclass(frozen=True)
class TreeChange:
    path: str
    mode: str
    sha: str | None  # None: deleted
    old_sha: str | None = None  # what the path held before (None: it is new)

    @property
    def kind(self) -> str:
        return {"040000": "tree", "160000": "commit"}.get(self.mode, "blob")


def read_commit(repo: Repository, sha: str) -> LocalCommit:
    raw = repo.git("cat-file", "commit", sha)
    header, _, message = raw.partition("\n\n")
    tree, parents, author = "", [], ("", "", datetime.now(UTC))
    for line in header.splitlines():
        key, _, value = line.partition(" ")
        if key == "tree":
            tree = value
        elif key == "parent":
            parents.append(value)
        elif key == "author":
            name, _, rest = value.partition(" <")
            email, _, stamp = rest.partition("> ")
            author = (name, email, datetime.fromtimestamp(int(stamp.split()[0]), UTC))
    return LocalCommit(tree=tree, parents=tuple(parents), author=author, message=message)


def touches_workflows(path: str) -> bool:
    return path == WORKFLOWS_DIR or path.startswith(WORKFLOWS_DIR + "/")


def credited(repo: Repository, commit: LocalCommit) -> str:
    """The commit's message, with a `Co-authored-by:` trailer for its local author when that is
    a person rather than the App (or local mode's Stepwise identity), since GitHub makes the
    App's bot user the author of the commit it signs."""
    name, email, _ = commit.author
    ours = {getattr(repo, "identity", {}).get("GIT_AUTHOR_EMAIL", ""), BOT_EMAIL}
    trailer = f"Co-authored-by: {name} <{email}>"
    if not email or email in ours or trailer.lower() in commit.message.lower():
        return commit.message
    done = git_process(["interpret-trailers", "--trailer", trailer], cwd=repo.root,
                       git_dir=repo.git_dir, stdin=commit.message.encode())
    if done.returncode:
        return f"{commit.message.rstrip()}\n\n{trailer}\n"
    return done.stdout.decode()


def tree_changes(repo: Repository, old_tree: str, new_tree: str) -> list[TreeChange]:
    """What turns `old_tree` into `new_tree`, file by file (no rename detection)."""
    out = repo.git("diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree)
    fields = out.split("\0")
    changes: list[TreeChange] = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_sha, new_sha, status = meta[1:].split()
        deleted = status.startswith("D")  # GitHub deletes a path given `sha: null` and its mode
        changes.append(TreeChange(path=path, mode=old_mode if deleted else new_mode,
                                  sha=None if deleted else new_sha,
                                  old_sha=None if status.startswith("A") else old_sha))
    return changes


def known_blobs(repo: Repository, commits: Sequence[str],
                changes: Sequence[TreeChange]) -> set[str]:
    """The changed contents GitHub has already, read at the changed paths only (not a listing
    of the parents' whole trees): what the first parent held at a path the change replaces
    or removes (a file moved there, or put back), and what any parent holds at the very path
    (a base merge brings the base's files). A content a parent holds only at another,
    unchanged path (a copy) is not found and is sent again, which GitHub takes as the same
    blob."""
    found = {c.old_sha for c in changes if c.old_sha is not None and c.kind == "blob"}
    wanted = [c for c in changes if c.kind == "blob" and c.sha is not None
              and c.sha not in found]
    names = [f"{commit}:{c.path}" for commit in commits[1:] for c in wanted
             if repo.objects.askable(c.path)]
    for answer in repo.objects.info_of(names):
        if answer is not None and answer.type == "blob":
            found.add(answer.oid)
    return found


def blob_contents(repo: Repository, shas: Sequence[str]) -> dict[str, bytes]:
    """The bytes of each blob, read in one `git cat-file --batch`."""
    if not shas:
        return {}
    done = git_process(["cat-file", "--batch"], cwd=repo.root, git_dir=repo.git_dir,
                       stdin="".join(f"{sha}\n" for sha in shas).encode())
    out, contents, pos = done.stdout, {}, 0
    for sha in shas:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split()
        size = int(header[2])
        contents[sha] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return contents


def blob_sizes(repo: Repository, shas: Sequence[str]) -> dict[str, int]:
    """The size in bytes of each blob, read in one `git cat-file --batch-check`."""
    if not shas:
        return {}
    done = git_process(["cat-file", "--batch-check"], cwd=repo.root, git_dir=repo.git_dir,
                       stdin="".join(f"{sha}\n" for sha in shas).encode())
    rows = (line.split() for line in done.stdout.decode().splitlines())
    return {row[0]: int(row[2]) for row in rows if len(row) == 3 and row[1] == "blob"}


def oversized_blobs(repo: Repository, changes: Sequence[TreeChange],
                    shas: Sequence[str]) -> list[tuple[str, int]]:
    """(path, size) of each file among `changes` whose new content (one of `shas`, the blobs to
    upload) is over GitHub's limit for one file, largest first."""
    sizes = blob_sizes(repo, shas)
    over = {sha: size for sha, size in sizes.items() if size > BLOB_BYTES}
    found = [(c.path, over[c.sha]) for c in changes if c.sha in over]
    return sorted(found, key=lambda item: -item[1])
