"""What the commits this process wrote say, kept so a later step need not ask git again.

A commit object never changes: the commit a worktree made with `commit-tree` has that tree and
that parent for good, so a chain of remembered parents proves that one commit is an ancestor of
another (every batch commit sits on the one before it, and the job's safe point asks whether the
base and the last commit are still in the branch's history). Only a yes is answered from
memory; anything the chain does not reach is asked of git as before.
"""

from __future__ import annotations


class KnownCommits:
    """Parents and trees of the commits this process wrote, and the ancestries proved so far."""

    WALK = 256  # parents followed per question before git is asked after all
    LIMIT = 100_000  # remembered facts; past it the memory starts again (git is asked again)

    def __init__(self) -> None:
        self._parents: dict[str, str] = {}
        self._trees: dict[str, str] = {}
        self._proved: set[tuple[str, str]] = set()

    def remember(self, commit: str, tree: str, parent: str) -> None:
        if len(self._parents) + len(self._proved) > self.LIMIT:
            self._parents, self._trees, self._proved = {}, {}, set()
        self._parents[commit], self._trees[commit] = parent, tree

    def tree_of(self, commit: str) -> str | None:
        return self._trees.get(commit)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool | None:
        """True when the remembered parents lead from `descendant` to `ancestor` (or it is
        one this process wrote); None when memory cannot say (ask git)."""
        walked: list[str] = []
        commit = descendant
        for _ in range(self.WALK):
            if (ancestor, commit) in self._proved or \
                    (commit == ancestor and (walked or commit in self._parents)):
                self._proved.update((ancestor, seen) for seen in walked)
                return True
            parent = self._parents.get(commit)
            if parent is None:
                return None
            walked.append(commit)
            commit = parent
        return None
