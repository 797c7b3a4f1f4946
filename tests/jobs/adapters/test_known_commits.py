"""What a step is told from memory instead of git says exactly what git would have said.

The diff a verify hook reads is the staged diff the worktree already read (when git found no
rename in it), the tree of a commit this process wrote is the one it wrote, and a chain of
commits it wrote proves ancestry; anything else is still asked of git.
"""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.workspace import Repository, Worktree
from jobs.engine.validation_hooks import TreeUnderTest
from tests.conftest import RepoFactory
from tests.jobs.adapters.test_index_state import git_calls
from tests.jobs.adapters.test_worktree_reset import FILES
from tests.kit.repos import git

GIT_DIFF = ("-c", "core.quotepath=false", "diff", "--no-ext-diff", "--no-textconv", "--no-color",
            "--no-renames")


def started(repo_factory: RepoFactory, tmp_path: Path) -> tuple[Path, Repository, Worktree, str]:
    path = repo_factory({**FILES, "naïve file.txt": "accent\n", "docs/long.md": "x\n" * 30})
    repo = Repository(path)
    sha = git(path, "rev-parse", "HEAD")
    return path, repo, repo.open_worktree(tmp_path / "wt" / "issue-1", sha, keep=True), sha


def under_test(repo: Repository, wt: Worktree, parent: str, tree: str) -> TreeUnderTest:
    return TreeUnderTest(repository=repo, worktree=wt, tree=tree, parent=parent,
                         seen_at=wt.path, isolated=False)


def test_the_diff_of_a_written_tree_is_the_staged_read_and_gits_own(
        repo_factory: RepoFactory, tmp_path: Path) -> None:
    path, repo, wt, sha = started(repo_factory, tmp_path)
    (wt.path / "src/app.py").write_text("print('changed')\n")
    (wt.path / "naïve file.txt").write_text("accent changed\n")
    (wt.path / "tool.sh").chmod(0o755)
    (wt.path / "src/deep/other.py").unlink()
    (wt.path / "src/blob.bin").write_bytes(b"\0\1binary")
    wt.stage_all()
    wt.staged_paths()
    tree = wt.write_tree()
    with git_calls() as calls:
        diff = under_test(repo, wt, sha, tree).diff
    assert sum(calls.values()) == 0
    assert diff == Repository(path).git(*GIT_DIFF, sha, tree)
    assert "new mode 100755" in diff and "deleted file mode" in diff and "naïve file.txt" in diff
    assert wt.diff_written(tree, sha) is None  # another pair: not this diff


def test_a_diff_where_git_found_a_rename_is_asked_again_without_renames(
        repo_factory: RepoFactory, tmp_path: Path) -> None:
    path, repo, wt, sha = started(repo_factory, tmp_path)
    (wt.path / "docs/long.md").rename(wt.path / "docs/moved.md")
    wt.stage_all()
    assert "rename from docs/long.md" in wt.staged_diff()
    tree = wt.write_tree()
    assert wt.diff_written(sha, tree) is None
    with git_calls() as calls:
        diff = under_test(repo, wt, sha, tree).diff
    assert calls["diff"] == 1
    assert diff == Repository(path).git(*GIT_DIFF, sha, tree) and "rename from" not in diff


def test_commits_this_process_wrote_answer_trees_and_ancestry_without_git(
        repo_factory: RepoFactory, tmp_path: Path) -> None:
    path, repo, wt, sha = started(repo_factory, tmp_path)
    commits = [sha]
    for number in range(3):
        (wt.path / "src/app.py").write_text(f"print({number})\n")
        wt.stage_all()
        commits.append(wt.commit_tree(wt.write_tree(), commits[-1], f"batch {number}\n"))
    last_tree = git(path, "rev-parse", f"{commits[3]}^{{tree}}")
    with git_calls() as calls:
        assert repo.is_ancestor(sha, commits[3]) and repo.is_ancestor(commits[1], commits[3])
        assert repo.is_ancestor(commits[2], commits[2])
        assert repo.tree_of(commits[3]) == last_tree
    assert sum(calls.values()) == 0
    first_tree = git(path, "rev-parse", f"{sha}^{{tree}}")
    with git_calls() as calls:  # what memory cannot prove is asked of git
        assert not repo.is_ancestor(commits[3], sha)
        assert not repo.is_ancestor("f" * 40, "f" * 40)  # no such commit, even equal to itself
        assert repo.tree_of(sha) == first_tree
    # the tree from the repository's long-lived reader (one `cat-file` at most, never again)
    assert calls["merge-base"] == 2 and calls["rev-parse"] == 0 and calls["cat-file"] <= 1
    other = git(path, "commit-tree", repo.tree_of(sha), "-p", commits[3], "-m", "by hand")
    with git_calls() as calls:
        assert repo.is_ancestor(sha, other)
    assert calls["merge-base"] == 1
