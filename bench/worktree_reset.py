"""The per-batch reset of a kept worktree against the repository's size (issue 47, item 3).

    .venv/bin/python -m bench.worktree_reset [--sizes 1000,100000] [--batches 5]

For each size, one repository of that many tracked files and one kept worktree; each batch
edits one module in Stepwise's process, stages it, runs `python -c pass` in the sandbox, writes
the tree and the commit, and resets the worktree to that commit, as a server step does. The
figure is the reset alone (median over the batches), measured twice in the same run: with the
validation's writes kept apart (an overlay, jobs/adapters/scratch.py: the reset puts back only
what Stepwise wrote) and with them written through (what a codemod does, and every command where
the overlay is unavailable: the reset proves the whole tree by its stat data).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench._common import machine_facts
from bench.big_repo import make_repository, module_path, module_text
from jobs.adapters.sandbox import SandboxPolicy, make_sandbox
from jobs.adapters.workspace import Repository

MODES = {"apart": False, "through": True}  # mode -> SandboxPolicy.writes_through


def reset_times(root: Path, files: int, batches: int, *, through: bool) -> list[float]:
    sha = make_repository(root / "repo", files)
    repository = Repository(root / "repo")
    worktree = repository.open_worktree(root / "wt" / "job", sha, keep=True)
    sandbox = make_sandbox(require_isolation=False)
    policy = SandboxPolicy(allow_commands=("python3",), writes_through=through)
    times = []
    for number in range(batches):
        rel = module_path(number * 7 % files)
        (worktree.path / rel).write_bytes(module_text(number) + b"# batch\n")
        worktree.stage_files([rel])
        sandbox.run(["python3", "-c", "pass"], cwd=worktree.path, policy=policy)
        tree = worktree.write_tree()
        sha = worktree.commit_tree(tree, sha, f"batch {number}")
        started = time.perf_counter()
        worktree.reset(sha)
        times.append(time.perf_counter() - started)
    worktree.remove()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--batches", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(machine_facts())
    print(f"{'files':>7} {'mode':>8} {'reset ms':>9} {'ratio':>6}")
    smallest: dict[str, float] = {}
    for files in sizes:
        for mode, through in MODES.items():
            with tempfile.TemporaryDirectory(prefix="stepwise-bench-reset-") as folder:
                median = statistics.median(reset_times(Path(folder), files, args.batches,
                                                       through=through)) * 1000
            smallest.setdefault(mode, median)
            print(f"{files:>7} {mode:>8} {median:>9.1f} {median / smallest[mode]:>6.2f}")


if __name__ == "__main__":
    main()
