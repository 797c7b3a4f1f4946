"""The worker never follows a path it did not make: a sandboxed command that swaps a parent
directory for a link to a host path gets nothing deleted or read outside the worktree.

The attacks run through the real bubblewrap sandbox; the clean-up, staging and reset are the
worker's own code on the host afterwards.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from jobs.adapters import tree_fd
from jobs.adapters.sandbox import BubblewrapSandbox
from jobs.adapters.staging import collect_changes
from jobs.adapters.workspace import Repository
from jobs.inputs.sandboxing import SandboxPolicy
from tests.kit.repos import make_repo
from tests.security import hostile

# shutil.move: over the overlay that keeps a validation's writes apart, renaming a directory
# of the worktree answers EXDEV (as on any overlayfs without redirect_dir), and move copies.
SWAP = "import os, shutil; shutil.move('tools', 'tools.moved'); os.symlink({victim!r}, 'tools')"


@dataclass(frozen=True)
class Layer:
    key: str
    entries: tuple[str, ...]
    tree: Path
    caches: Path = Path("/nonexistent/stepwise-caches")  # no tool caches: none are bound

    def program_dirs(self) -> list[str]:
        return []


def _victim(base: Path) -> Path:
    """A host directory that looks exactly like bubblewrap's stubs: empty and removable."""
    victim = base / "victim"
    (victim / "node_modules").mkdir(parents=True)
    (victim / "stamp").write_bytes(b"")
    return victim


@hostile.needs_bwrap
def test_mount_stub_clean_up_does_not_follow_a_parent_swapped_for_a_link(tmp_path: Path) -> None:
    repo, environment = tmp_path / "repo", tmp_path / "env"
    (repo / "tools").mkdir(parents=True)
    (repo / "tools" / "keep.txt").write_text("tracked\n")
    (environment / "tools" / "node_modules").mkdir(parents=True)
    (environment / "tools" / "node_modules" / "pkg.js").write_text("x\n")
    (environment / "tools" / "stamp").write_text("built\n")
    victim = _victim(tmp_path)
    layer = Layer("k", ("tools/node_modules", "tools/stamp"), environment)
    policy = SandboxPolicy(allow_commands=("python3",), environment=layer, timeout=30)

    result = BubblewrapSandbox().run(["python3", "-c", SWAP.format(victim=str(victim))], cwd=repo,
                                     policy=policy)

    assert result.exit_code == 0, result.output_tail
    assert (repo / "tools").is_symlink()  # the swap happened inside the sandbox
    assert (victim / "node_modules").is_dir() and (victim / "stamp").is_file(), \
        "the worker deleted host files through the link the command planted"


def test_clean_up_in_a_tree_ignores_links_on_the_way(tmp_path: Path) -> None:
    root, victim = tmp_path / "root", _victim(tmp_path)
    root.mkdir()
    os.symlink(victim, root / "tools")
    for rel in ("tools/node_modules", "tools/stamp"):
        assert not tree_fd.remove_if_empty(root, rel)
        assert not tree_fd.remove(root, rel)
        tree_fd.remove_empty_parents(root, rel)
    assert sorted(os.listdir(victim)) == ["node_modules", "stamp"]
    with pytest.raises(tree_fd.TreeEscape, match="`tools` is a symbolic link"):
        tree_fd.readlink(root, "tools/x")
    with pytest.raises(ValueError, match="not a plain path"):
        tree_fd.remove(root, "../victim")


def test_staging_never_reads_a_link_target_through_a_swapped_parent(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    os.symlink("secret-target", tmp_path / "hostlink")
    os.symlink(tmp_path, root / "tools")
    (tmp_path / "host.txt").write_text("host secret\n")
    changes = collect_changes(root, ["tools/hostlink", "tools/host.txt"])
    assert [(change.mode, change.data) for change in changes] == [("0", None), ("0", None)]


@hostile.needs_bwrap
@pytest.mark.parametrize("through", [False, True], ids=["validation", "codemod"])
def test_a_reset_after_the_swap_leaves_the_host_directory_alone(tmp_path: Path,
                                                                through: bool) -> None:
    origin = tmp_path / "origin"
    make_repo(origin, {"tools/keep.txt": "tracked\n", "README.md": "hi\n"})
    victim = _victim(tmp_path)
    (victim / "data.txt").write_text("host data\n")
    worktree = Repository(origin).open_worktree(tmp_path / "wt",
                                                Repository(origin).resolve("HEAD"))
    policy = SandboxPolicy(allow_commands=("python3",), timeout=30, writes_through=through)
    result = BubblewrapSandbox().run(["python3", "-c", SWAP.format(victim=str(victim))],
                                     cwd=worktree.path, policy=policy)
    assert result.exit_code == 0, result.output_tail
    # a validation's swap stays in its overlay (jobs/adapters/scratch.py); a codemod's is real
    assert (worktree.path / "tools").is_symlink() == through
    worktree.reset(worktree.head)
    assert (worktree.path / "tools" / "keep.txt").read_text() == "tracked\n"
    assert sorted(os.listdir(victim)) == ["data.txt", "node_modules", "stamp"]
