"""Benchmark: what a user pays per batch, against doing the same git work by hand (issue 47).

    .venv/bin/python -m bench.batch_floor [--batches 40] [--runs 3]

A repository of N one-line modules, each with one call to rename. The floor is a shell loop in
a worktree that does per file what a careful person would: `sed` the call, `python -c pass`,
`git add`, `git commit` with a trailer. Against it, in the same run and alternating with it,
the real CLI: `stepwise run --yes` (one batch per file, validation `python -c pass`, no plan
approval), once with `evidence.coverage: off` (the engine's own cost) and once with the
default `auto` (what changed-line coverage adds to a trivial suite). Both run this Python as
`python` (its folder first on PATH), so the floor is what the issue measured, not a version
manager's shim. Prints the median seconds
of each, the ratio to the floor (target: engine <= 1.5x), Stepwise's own milliseconds per
batch over the floor, the CPU seconds of each process tree and the machine's load (on a shared
machine the wall clock moves with the load; the CPU and the counts below do not).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPWISE = Path(sys.executable).with_name("stepwise")
# Both sides run the same `python`: this benchmark's own interpreter, found first on PATH by the
# shell loop and by the sandbox alike (a version manager's shim, e.g. pyenv's, takes ~100 ms a
# launch and would hide Stepwise's own cost behind a slower floor).
PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
GIT_ENV = {**os.environ, "PATH": PATH, "GIT_AUTHOR_NAME": "b",
           "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.invalid"}
ISSUE = """# Rename old_call to new_call

```stepwise
recipe: replace
paths: ["*.py"]
find: ['old_call\\(']
replace: 'new_call('
```
"""
FLOOR = """set -e
git worktree add -q ../floor -b floor
cd ../floor
for f in m*.py; do
  sed -i 's/old_call(/new_call(/' "$f"
  python -c pass
  git add "$f"
  git commit -q -m "batch: $f" -m "Stepwise-Job: floor"
done
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True)


def make_repo(where: Path, batches: int, coverage: str) -> Path:
    repo = where / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "b")  # local commits are made as the checkout's identity
    git(repo, "config", "user.email", "b@example.invalid")
    for index in range(batches):
        (repo / f"m{index:03}.py").write_text(f"def f{index}():\n    return old_call({index})\n")
    (repo / ".github").mkdir()
    (repo / ".github" / "stepwise.yml").write_text(
        'validate: ["python -c pass"]\nbatch_size: 1\nbatches_per_milestone: 1000\n'
        f'require_plan_approval: false\nallow_commands: [python]\nevidence:\n  coverage: "{coverage}"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (where / "issue.md").write_text(ISSUE)
    return repo


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds of `command`, and the CPU seconds of its whole process tree (what the load
    of the machine does not inflate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} exited {done.returncode}:\n{done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")
    return elapsed, cpu


def one_round(batches: int) -> dict[str, tuple[float, float]]:
    figures: dict[str, tuple[float, float]] = {}
    for name in ("floor", "engine", "engine+coverage"):
        with tempfile.TemporaryDirectory(prefix="stepwise-floor-") as tmp:
            repo = make_repo(Path(tmp), batches, "auto" if name == "engine+coverage" else "off")
            if name == "floor":
                figures[name] = timed(["bash", "-c", FLOOR], repo)
            else:
                figures[name] = timed([str(STEPWISE), "run", "--repo", str(repo), "--issue",
                                       str(Path(tmp) / "issue.md"), "--yes"], Path(tmp))
    return figures


def counted(batches: int) -> tuple[int, int] | None:
    """Git processes and record saves of one engine run (coverage off), from `strace -f`: the
    counts that do not move with the machine's load. None without strace."""
    if shutil.which("strace") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="stepwise-floor-") as tmp:
        repo = make_repo(Path(tmp), batches, "off")
        trace = Path(tmp) / "trace"
        timed(["strace", "-f", "-qq", "-e", "trace=execve,rename", "-e", "signal=none", "-o",
               str(trace), str(STEPWISE), "run", "--repo", str(repo), "--issue",
               str(Path(tmp) / "issue.md"), "--yes"], Path(tmp))
        lines = [line for line in trace.read_text(errors="replace").splitlines()
                 if line.rstrip().endswith("= 0")]
        gits = sum('execve("' in line and '/git", ["git"' in line for line in lines)
        saves = sum("rename(" in line and re.search(r'/issue-\d+\.json"\)', line) is not None
                    for line in lines)
        return gits, saves


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not STEPWISE.exists() or shutil.which("git") is None:
        raise SystemExit(f"needs git and the stepwise CLI beside this Python ({STEPWISE})")
    rounds = [one_round(args.batches) for _ in range(args.runs)]
    floor = statistics.median(r["floor"][0] for r in rounds)
    launch = statistics.median(timed(["python", "-c", "pass"], ROOT)[0] for _ in range(9))
    print(f"{args.batches} one-file batches, validation `python -c pass`, {args.runs} runs "
          f"(medians; alternating; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"  `python` is {shutil.which('python', path=PATH)}: {launch * 1000:.0f} ms a launch")
    print(f"  shell floor (sed, python, git add, git commit): {floor:6.2f} s, CPU "
          f"{statistics.median(r['floor'][1] for r in rounds):5.2f} s")
    for name in ("engine", "engine+coverage"):
        median = statistics.median(r[name][0] for r in rounds)
        cpu = statistics.median(r[name][1] for r in rounds)
        own_ms = (median - floor) / args.batches * 1000
        print(f"  stepwise run --yes ({name:15}):   {median:6.2f} s  = {median / floor:4.2f}x the "
              f"floor, {own_ms:5.0f} ms a batch over it; CPU of its process tree {cpu:5.2f} s")
    counts = counted(args.batches)
    if counts is None:
        print("  (strace not installed: git processes and saves not counted)")
    else:
        print(f"  engine per batch: {counts[0] / args.batches:.1f} git processes, "
              f"{counts[1] / args.batches:.1f} record saves (strace -f, one run, coverage off)")


if __name__ == "__main__":
    main()
