"""Benchmark 2: Stepwise's per-batch overhead beside a plain script doing the same git work.

    .venv/bin/python -m bench.batch_overhead [--batches 50] [--runs 3]

A synthetic repository with one match in each of N files, a local job of N batches of one file
each (one milestone, validation `python -c pass`), run by the real engine (the default
sandbox: bubblewrap when available) against a plain script that makes the same edits with
the same git operations in a worktree (edit, `git add`, `python -c pass`, `git commit`), in
the same run. Prints the median of each and the ratio (target <= 1.5), and the engine with
the plain (unsandboxed) runner to show what the sandbox itself costs.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["STEPWISE_STORE_CHECK"] = "0"

from jobs.adapters.sandbox import PlainSandbox, Sandbox, make_sandbox  # noqa: E402
from jobs.domain.spec import parse_issue_file  # noqa: E402
from jobs.local import LocalSession  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
