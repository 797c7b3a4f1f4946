"""Benchmark: what the evidence (issue 39) costs per batch, and how far the forecast is off.

    .venv/bin/python -m bench.evidence_cost [--modules 12] [--batch-size 3] [--runs 2]

A Python package of `--modules` modules (each a function calling `old_api`, with its own tests:
a real pytest suite of a few hundred tests) is moved to `new_api` by a local job in batches of
`--batch-size` files, run by the real engine in the real sandbox, twice in the same run: with
the evidence feature (changed-line coverage under coverage.py limited to the batch's files, the
edit shapes, the plan's dry run and forecast) and without it (the feature left out of the
features' tuple). Prints per batch the median validation seconds, the job's wall seconds and
its CPU seconds (this process and its children: steadier than wall time on a shared machine)
of each, and their ratios (target <= 1.3); then the forecast's error on the jobs: a first job
(the baseline only) and a second one on the same repository (with the first one's figures).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["STEPWISE_STORE_CHECK"] = "0"

from jobs.composition import FEATURES  # noqa: E402
from jobs.features.evidence.forecast import FACET, Forecast, actual  # noqa: E402
from jobs.features.evidence.record import job_facet  # noqa: E402
from jobs.inputs.spec import parse_issue_file  # noqa: E402
from jobs.kernel.job import Job  # noqa: E402
from jobs.local import LocalSession  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
ISSUE = """# Replace old_api with new_api

```stepwise
recipe: replace
paths: ["src/pkg/m*.py"]
find: ['\\bold_api\\(']
replace: 'new_api('
```
"""
MODULE = '''"""Module {n}."""

from pkg.api import new_api, old_api  # noqa: F401


def compute_{n}(values):
    total = 0
    for value in values:
        if value % 3 == 0:
            total += old_api(value)
        elif value % 3 == 1:
            total -= old_api(value) // 2
        else:
            total += value
    return total


def describe_{n}(value):
    words = [str(part) for part in range(value % 7)]
    return "-".join(words) + str(old_api(value))
'''
TESTS = '''import pytest

from pkg.m{n} import compute_{n}, describe_{n}


@pytest.mark.parametrize("size", range(30))
def test_compute_{n}(size):
    values = list(range(size * 10))
    assert compute_{n}(values) == compute_{n}(list(values))


@pytest.mark.parametrize("value", range(10))
def test_describe_{n}(value):
    assert describe_{n}(value).endswith(str(value * 2))
'''


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, check=True)


def build(path: Path, modules: int, batch_size: int) -> None:
    files = {".github/stepwise.yml": "validate: ['python -m pytest -q -p no:cacheprovider']\n"
             f"allow_commands: [python]\nbatch_size: {batch_size}\nbatches_per_milestone: 100\n"
             "require_plan_approval: false\nenv: {PYTHONPATH: src}\n",
             "src/pkg/__init__.py": "",
             "src/pkg/api.py": "def old_api(x):\n    return x * 2\n\n\ndef new_api(x):\n"
                               "    return x * 2\n"}
    for n in range(modules):
        files[f"src/pkg/m{n}.py"] = MODULE.format(n=n)
        files[f"tests/test_m{n}.py"] = TESTS.format(n=n)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")


def cpu_seconds() -> float:
    """CPU time of this process and of every finished child (git, bubblewrap and what it ran):
    on a machine shared with other work, it moves far less than wall time does."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_job(path: Path, number: int, *, evidence: bool) -> tuple[Job, float, float]:
    features = FEATURES if evidence else tuple(f for f in FEATURES if f.name != "evidence")
    started, cpu = time.perf_counter(), cpu_seconds()
    session = LocalSession(path, number, sink=lambda kind, text: None, features=features)
    outcome = session.run(parse_issue_file(ISSUE), yes=True)
    took, spent = time.perf_counter() - started, cpu_seconds() - cpu
    assert outcome.exit_code == 0, outcome.message
    return session.load(), took, spent


def validation_s(job: Job) -> list[float]:
    return [sum(c.duration_s for c in b.attempts[-1].commands) for b in job.batches if b.attempts]


def error(stated: float, done: float) -> float:
    return abs(stated - done) / done if done else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=3)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {"with": [], "without": [], "wall_with": [],
                                       "wall_without": [], "cpu_with": [], "cpu_without": []}
    errors: dict[str, list[float]] = {"runs_first": [], "wall_first": [], "runs_second": [],
                                      "wall_second": []}
    with tempfile.TemporaryDirectory(prefix="stepwise-bench-evidence-") as tmp:
        for run in range(args.runs):
            for evidence in (False, True):
                repo = Path(tmp) / f"repo-{run}-{evidence}"
                build(repo, args.modules, args.batch_size)
                job, took, spent = run_job(repo, 1, evidence=evidence)
                batches = len(job.batches)
                key = "with" if evidence else "without"
                figures[key] += validation_s(job)
                figures[f"wall_{key}"].append(took / batches)
                figures[f"cpu_{key}"].append(spent / batches)
                if not evidence:
                    continue
                second, _, _ = run_job(repo, 2, evidence=True)  # the same work, after the first
                for label, measured in (("first", job), ("second", second)):
                    stated, done = job_facet(measured, FACET, Forecast), actual(measured)
                    assert stated is not None and done is not None
                    errors[f"runs_{label}"].append(error(stated.runs, done.runs))
                    errors[f"wall_{label}"].append(error(stated.wall_s, done.wall_s))
    med = {key: statistics.median(values) for key, values in figures.items()}
    print(f"evidence cost per batch ({args.modules} modules, batches of {args.batch_size}, "
          f"{args.runs} runs; real pytest in the sandbox)")
    print(f"  validation per batch: {med['without']:.2f} s without, {med['with']:.2f} s with "
          f"the evidence: {med['with'] / med['without']:.2f}x (target <= 1.3)")
    print(f"  job wall per batch:   {med['wall_without']:.2f} s without, {med['wall_with']:.2f} s "
          f"with: {med['wall_with'] / med['wall_without']:.2f}x")
    print(f"  job CPU per batch:    {med['cpu_without']:.2f} s without, {med['cpu_with']:.2f} s "
          f"with: {med['cpu_with'] / med['cpu_without']:.2f}x (this process and its children)")
    for label, words in (("first", "first job (baseline only)"),
                         ("second", "second job (with the first's figures)")):
        print(f"  forecast error, {words}: validation runs "
              f"{100 * statistics.mean(errors[f'runs_{label}']):.0f}%, wall time "
              f"{100 * statistics.mean(errors[f'wall_{label}']):.0f}%")


if __name__ == "__main__":
    main()
