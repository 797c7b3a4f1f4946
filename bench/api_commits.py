"""Benchmark (issue 24): landing a batch through the Git Data API (commits GitHub signs) against
pushing it with git, in GitHub calls and wall time per batch.

    .venv/bin/python -m bench.api_commits [--files 1,5,50] [--batches 5] [--repo-files 2000]

Against the fake GitHub serving git over smart HTTP with installation tokens (as a worker
reaches GitHub), through the real server-mode mirror (bot/github/mirror.py) and the real
API committer (bot/github/git_data.py): for each batch size, `--batches` commits changing that
many files of a repository of `--repo-files` files are landed with `commit_via: git` (one
`git push`) and with `commit_via: api` (blobs GitHub lacks, a tree on the parent's tree, the
commit, the ref update, then a fetch of GitHub's commit). A last row lands a merge of a base
that changed `--files`' largest count of files: the API sends none of those blobs again.

"calls" are every HTTP request the fake GitHub answered (REST calls and git's smart-HTTP
round trips alike); the time is the median wall time of one landing. Ratios are against the
git-push baseline measured in the same run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import machine_facts
from bot.github.app import GitHubApp
from bot.github.git_data import ApiCommits
from bot.github.mirror import MirroredRepository, open_mirror
from tests.kit import github_git
from tests.kit.github import FakeGitHub

OWNER, NAME = "bench", "signed"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"


@dataclass
class Row:
    scenario: str
    mode: str
    calls: float
    rest: float
    ms: float


class Counting:
    """Counts the requests the fake answers (REST and git over HTTP)."""

    def __init__(self, gh: FakeGitHub) -> None:
        self.total = self.rest = 0
        inner: Callable[..., Any] = gh.handle

        def handle(method: str, target: str, headers: dict[str, str], body: bytes) -> Any:
            self.total += 1
            self.rest += ".git/" not in target
            return inner(method, target, headers, body)

        gh.handle = handle  # type: ignore[method-assign]


def commit(repo: MirroredRepository, parent: str, files: dict[str, bytes], message: str,
           *, parents: tuple[str, ...] = ()) -> str:
    """A local commit of `files` on `parent`, as the engine writes one."""
    index = repo.root.parent / "bench-index"
    env = {"GIT_INDEX_FILE": str(index)}
    git_dir = repo.git_dir
    github_git.git(git_dir, "read-tree", parent, env=env)
    lines = []
    for path, data in files.items():
        blob = github_git.git(git_dir, "hash-object", "-w", "--stdin",
                              input_bytes=data).decode().strip()
        lines.append(f"100644 {blob}\t{path}\n")
    github_git.git(git_dir, "update-index", "--index-info", env=env,
                   input_bytes="".join(lines).encode())
    tree = github_git.git(git_dir, "write-tree", env=env).decode().strip()
    index.unlink()
    extra = [arg for p in parents for arg in ("-p", p)]
    return github_git.git(git_dir, "commit-tree", tree, "-p", parent, *extra, "-m",
                          message).decode().strip()


def measure(root: Path, mode: str, size: int, batches: int, repo_files: int,
            merge: bool = False) -> Row:
    with FakeGitHub(root=root / f"gh-{mode}-{size}-{merge}", git_http=True) as gh:
        files = {f"src/m{i:05}.py": f"value = {i}\n" for i in range(repo_files)}
        gh.add_repo(OWNER, NAME, files)
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url, timeout=30).client(1)
        repo = open_mirror(root / f"work-{mode}-{size}-{merge}", REPO, gh.repos[REPO].clone_url,
                           auth=client.git_auth_args, default_branch="main")
        if mode == "api":
            repo.api = ApiCommits(client, REPO)
        head = repo.branch_head("main")
        assert head is not None
        repo.create_branch(BRANCH, head)
        counter = Counting(gh)
        times: list[float] = []
        calls = rest = 0
        for number in range(batches):
            changed = {f"src/m{(number * size + i) % repo_files:05}.py":
                       f"value = {i}  # batch {number}\n".encode() for i in range(size)}
            parents: tuple[str, ...] = ()
            if merge:  # the base changed `size` files; the branch merges it
                base = gh.push_files(REPO, "main", {p: d.decode() + "# base\n"
                                                     for p, d in changed.items()}, "base")
                repo.remote("fetch", "--quiet", "origin", "+refs/heads/main:refs/heads/main")
                changed = {p: d + b"# base\n" for p, d in changed.items()}
                parents = (base,)
            local = commit(repo, head, changed, f"batch {number}\n\nStepwise-Job: bench\n",
                           parents=parents)
            before, before_rest = counter.total, counter.rest
            started = time.perf_counter()
            head = repo.advance_branch(BRANCH, local, head)
            times.append(time.perf_counter() - started)
            calls += counter.total - before
            rest += counter.rest - before_rest
        label = f"merge of a base that changed {size} files" if merge else f"{size} files"
        return Row(label, mode, calls / batches, rest / batches,
                   statistics.median(times) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="1,5,50")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--repo-files", type=int, default=2000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.files.split(",")]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-api-commits-") as tmp:
        for size in sizes:
            for mode in ("git", "api"):
                rows.append(measure(Path(tmp), mode, size, args.batches, args.repo_files))
        for mode in ("git", "api"):
            rows.append(measure(Path(tmp), mode, max(sizes), args.batches, args.repo_files,
                                merge=True))
    print(f"# commits through the API vs git pushes ({machine_facts()})")
    print(f"# repository of {args.repo_files} files, {args.batches} batches per row, "
          "median wall time of one landing")
    print(f"{'batch':42} {'mode':4} {'calls':>6} {'REST':>5} {'ms':>8} {'calls x':>8} "
          f"{'time x':>7}")
    baseline = {r.scenario: r for r in rows if r.mode == "git"}
    for row in rows:
        base = baseline[row.scenario]
        print(f"{row.scenario:42} {row.mode:4} {row.calls:6.1f} {row.rest:5.1f} {row.ms:8.1f} "
              f"{row.calls / base.calls:8.2f} {row.ms / base.ms:7.2f}")


if __name__ == "__main__":
    main()
