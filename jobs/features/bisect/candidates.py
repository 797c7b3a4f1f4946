"""A candidate tree: the job's head with only some files of a failed edit applied, checked
out in the job's worktree for validation (git plumbing through the Checkout port)."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.ports import Checkout


def candidate_tree(worktree: Checkout, head: str, edited: str, files: Sequence[str]) -> str:
    """Make the worktree's files and index the head plus `files` as they are in `edited`
    (a file absent there is removed) and return that tree's id."""
    worktree.reset(head)
    listing = worktree.git("--literal-pathspecs", "ls-tree", "-z", "--full-tree", edited, "--",
                           *files) if files else ""
    entries: dict[str, str] = {}
    for entry in listing.split("\0"):
        if "\t" in entry:
            path = entry.split("\t", 1)[1]
            entries[path] = entry
    zero = "0" * len(edited)
    lines = [entries.get(path, f"0 {zero}\t{path}") for path in files]
    if lines:
        worktree.git("update-index", "-z", "--index-info", stdin="\0".join(lines) + "\0")
    tree = worktree.write_tree()
    worktree.restore(tree)
    return tree
