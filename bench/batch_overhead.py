"""Benchmark 2: Stepwise's per-batch overhead beside a plain script doing the same git work.

    .venv/bin/python -m bench.batch_overhead [--batches 50] [--runs 3] [--count]

A synthetic repository with one match in each of N files, a local job of N batches of one file
each (one milestone, validation `python -c pass`), run by the real engine (the default
sandbox: bubblewrap when available) against a plain script that makes the same edits with
the same git operations in a worktree (edit, `git add`, `python -c pass`, `git commit`), in
the same run. Prints the median of each and the ratio (target <= 1.5), and the engine with
the plain (unsandboxed) runner to show what the sandbox itself costs. `--count` runs the
job once more and prints the git processes (by subcommand) and fsyncs it made per batch.

Superseded for the target by bench.batch_floor (issue 47), which measures what a user pays:
the `stepwise` CLI against a shell loop doing the same git work by hand (`sed`, `python -c
pass`, `git add`, `git commit` with a trailer), with coverage off and on. This floor is cheaper
(a Python loop, no `sed` process, no trailer) and the engine here runs in process with
`evidence.coverage` at its default (`auto`), so its ratio is higher than batch_floor's engine
row; it is kept as the in-process figure, comparable with its own history.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["STEPWISE_STORE_CHECK"] = "0"

from jobs.adapters.sandbox import PlainSandbox, Sandbox, make_sandbox  # noqa: E402
from jobs.inputs.spec import parse_issue_file  # noqa: E402
from jobs.local import LocalSession  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
SUPERSEDED = (
    "superseded for the 1.5x target by bench.batch_floor (issue 47): this floor is a Python loop "
    "(no `sed`, no trailer) and the engine runs in this process with `evidence.coverage` at its "
    "default; kept as the in-process measurement (docs/performance.md, section 2)")
ISSUE = """# Replace old_api with new_api

```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bold_api\\(']
replace: 'new_api('
```
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True,
                          check=True).stdout


def build(path: Path, batches: int) -> None:
    (path / ".github").mkdir(parents=True)
    (path / ".github" / "stepwise.yml").write_text(
        f"validate: ['python -c pass']\nallow_commands: [python]\nbatch_size: 1\n"
        f"batches_per_milestone: {batches}\nrequire_plan_approval: false\n")
    for index in range(batches):
        module = path / "src" / f"pkg{index % 10}" / f"m{index}.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text("def f(x):\n    return old_api(x)\n" + "y = 1\n" * 40)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "b")  # local commits are made as the checkout's identity
    git(path, "config", "user.email", "b@example.invalid")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")


def plain_script(path: Path) -> float:
    """The same edits and git operations, with none of Stepwise's checks or records."""
    started = time.perf_counter()
    worktree = path.parent / "plain-worktree"
    git(path, "worktree", "add", "-q", "-b", "plain", str(worktree), "main")
    pattern = re.compile(r"\bold_api\(")
    for module in sorted((worktree / "src").rglob("*.py")):
        module.write_text(pattern.sub("new_api(", module.read_text()))
        git(worktree, "add", "-A")
        subprocess.run(["python", "-c", "pass"], cwd=worktree, check=True)
        git(worktree, "commit", "-q", "-m", f"edit {module.name}")
    elapsed = time.perf_counter() - started
    git(path, "worktree", "remove", "--force", str(worktree))
    return elapsed


def stepwise_run(path: Path, sandbox: Sandbox) -> float:
    started = time.perf_counter()
    outcome = LocalSession(path, 1, sink=lambda kind, text: None, sandbox=sandbox).run(
        parse_issue_file(ISSUE), yes=True)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0, outcome.message
    return elapsed


def measure(batches: int, runs: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"plain script": [], "stepwise": [],
                                       "stepwise, no sandbox": []}
    for _ in range(runs):
        for name in figures:
            with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
                path = Path(tmp) / "repo"
                build(path, batches)
                if name == "plain script":
                    figures[name].append(plain_script(path))
                else:
                    box = make_sandbox(require_isolation=False) if name == "stepwise" \
                        else PlainSandbox()
                    figures[name].append(stepwise_run(path, box))
    return figures


def git_subcommand(argv: list[str]) -> str:
    """The git subcommand of a git_runner argv (after `--git-dir`, `--work-tree` and `-c`s)."""
    rest = argv[1:]
    while rest and (rest[0].startswith("--") or rest[0] == "-c"):
        rest = rest[2:] if rest[0] == "-c" else rest[1:]
    return rest[0] if rest else "?"


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count git processes (by subcommand) and fsyncs while the block runs."""
    counts: Counter[str] = Counter()
    real_popen, real_fsync = subprocess.Popen.__init__, os.fsync

    def popen(self: subprocess.Popen[Any], argv: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(argv, list) and argv and argv[0] == "git":
            counts["git " + git_subcommand(argv)] += 1
        real_popen(self, argv, *args, **kwargs)

    def fsync(fd: int) -> None:
        counts["fsync"] += 1
        real_fsync(fd)

    patched: list[tuple[Any, str, Callable[..., Any]]] = [
        (subprocess.Popen, "__init__", popen), (os, "fsync", fsync)]
    for owner, name, value in patched:
        setattr(owner, name, value)
    try:
        yield counts
    finally:
        os.fsync = real_fsync
        subprocess.Popen.__init__ = real_popen  # type: ignore[method-assign]


def count_per_batch(batches: int) -> None:
    """Git processes and fsyncs per batch: a job of `batches` against one of 1 batch."""
    totals = []
    for size in (1, batches):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            path = Path(tmp) / "repo"
            build(path, size)
            with counting() as counts:
                stepwise_run(path, make_sandbox(require_isolation=False))
            totals.append(counts)
    extra = batches - 1
    print(f"per batch (a {batches}-batch job minus a 1-batch one, over {extra} batches):")
    names = sorted(set(totals[0]) | set(totals[1]))
    for name in names:
        per = (totals[1][name] - totals[0][name]) / extra
        if per:
            print(f"  {name:<24}{per:>6.2f}")
    git_total = sum(totals[1][n] - totals[0][n] for n in names if n.startswith("git "))
    print(f"  {'git processes':<24}{git_total / extra:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", action="store_true",
                        help="count git processes and fsyncs per batch instead of timing")
    args = parser.parse_args()
    if args.count:
        count_per_batch(args.batches)
        return
    if shutil.which("python") is None:
        raise SystemExit("`python` must be on PATH (run from the project's virtualenv)")
    figures = measure(args.batches, args.runs)
    base = statistics.median(figures["plain script"])
    print(f"{args.batches}-batch job, median of {args.runs}; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores")
    for name, times in figures.items():
        median = statistics.median(times)
        print(f"{name:<22}{median:>7.2f} s{median / args.batches * 1e3:>8.0f} ms/batch"
              f"{median / base:>7.2f}x")
    ratio = statistics.median(figures["stepwise"]) / base
    print(f"target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'} ({ratio:.2f}x)")
    print(SUPERSEDED)


if __name__ == "__main__":
    main()
