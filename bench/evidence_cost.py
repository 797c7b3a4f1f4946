"""Benchmark: what the evidence (issue 39) costs per batch, and how far the forecast is off.

    .venv/bin/python -m bench.evidence_cost [--modules 12] [--batch-size 3] [--runs 2] [--python python3.12]

A Python package of `--modules` modules (each a function calling `old_api`, with its own tests:
a unittest suite, so any interpreter runs it) is moved to `new_api` by a local job in batches of
`--batch-size` files, run by the real engine in the real sandbox, twice in the same run: with
the evidence feature (changed-line coverage under coverage.py limited to the batch's files, the
edit shapes, the plan's dry run and forecast) and without it (the feature left out of the
features' tuple), for each `--python` given as the repository's interpreter (coverage.py
traces with its C tracer before Python 3.12, with `sys.monitoring` from 3.12 on). Prints per
batch the median validation seconds and the job's wall seconds of each, and their ratios
(target <= 1.3); then the forecast's error on the jobs: a first job (the baseline only) and a
second one on the same repository (with the first one's figures).
"""

from __future__ import annotations

import argparse
import os
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
from jobs.features.evidence.forecast import actual  # noqa: E402
from jobs.features.evidence.record import job_evidence  # noqa: E402
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
TESTS = '''import unittest

from pkg import work
from pkg.m{n} import compute_{n}, describe_{n}


class Test{n}(unittest.TestCase):
    def test_compute(self):
        for size in range(30):
            values = list(range(size * 10))
            self.assertEqual(compute_{n}(values), compute_{n}(list(values)))

    def test_the_rest_of_the_library(self):  # what a suite mostly runs: code the batch left alone
        self.assertEqual(len(work.crunch({n} + 400)), {n} + 400)

    def test_describe(self):
        for value in range(10):
            self.assertTrue(describe_{n}(value).endswith(str(value * 2)))
'''


WORK = '''"""The rest of the library: code no batch changes, which the tests run a lot."""


def step(value):
    return (value * 31 + 7) % 1009


def crunch(size):
    table = {}
    for row in range(size):
        total = 0
        for column in range(1500):
            total = step(total + row * column)
        table[row] = total
    return table
'''


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, check=True)


def build(path: Path, modules: int, batch_size: int, python: str) -> None:
    files = {".github/stepwise.yml": f"validate: ['{python} -m unittest discover -s tests -q']\n"
             f"allow_commands: [python]\nbatch_size: {batch_size}\nbatches_per_milestone: 100\n"
             "require_plan_approval: false\nenv: {PYTHONPATH: src}\n",
             "src/pkg/__init__.py": "",
             "src/pkg/work.py": WORK,
             "src/pkg/api.py": "def old_api(x):\n    return x * 2\n\n\ndef new_api(x):\n"
                               "    return x * 2\n"}
    for n in range(modules):
        files[f"src/pkg/m{n}.py"] = MODULE.format(n=n)
        files[f"tests/test_m{n}.py"] = TESTS.format(n=n)
    files["tests/__init__.py"] = ""
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "b")  # local commits are made as the checkout's identity
    git(path, "config", "user.email", "b@example.invalid")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")


def run_job(path: Path, number: int, *, evidence: bool) -> tuple[Job, float]:
    features = FEATURES if evidence else tuple(f for f in FEATURES if f.name != "evidence")
    started = time.perf_counter()
    session = LocalSession(path, number, sink=lambda kind, text: None, features=features)
    outcome = session.run(parse_issue_file(ISSUE), yes=True)
    took = time.perf_counter() - started
    assert outcome.exit_code == 0, outcome.message
    return session.load(), took


def validation_s(job: Job) -> list[float]:
    return [sum(c.duration_s for c in b.attempts[-1].commands) for b in job.batches if b.attempts]


def error(stated: float, done: float) -> float:
    return abs(stated - done) / done if done else 0.0


def measure(args: argparse.Namespace, python: str) -> None:
    figures: dict[str, list[float]] = {"with": [], "without": [], "wall_with": [],
                                       "wall_without": []}
    errors: dict[str, list[float]] = {"runs_first": [], "wall_first": [], "runs_second": [],
                                      "wall_second": []}
    with tempfile.TemporaryDirectory(prefix="stepwise-bench-evidence-") as tmp:
        for run in range(args.runs):
            for evidence in (False, True):
                repo = Path(tmp) / f"repo-{run}-{evidence}"
                build(repo, args.modules, args.batch_size, python)
                job, took = run_job(repo, 1, evidence=evidence)
                key = "with" if evidence else "without"
                figures[key] += validation_s(job)
                figures[f"wall_{key}"].append(took / len(job.batches))
                if not evidence:
                    continue
                second, _ = run_job(repo, 2, evidence=True)  # the same work, after the first
                for label, measured in (("first", job), ("second", second)):
                    stated, done = job_evidence(measured).forecast, actual(measured)
                    assert stated is not None and done is not None
                    errors[f"runs_{label}"].append(error(stated.runs, done.runs))
                    errors[f"wall_{label}"].append(error(stated.wall_s, done.wall_s))
    med = {key: statistics.median(values) for key, values in figures.items()}
    version = subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{version} ({python}): {args.modules} modules, batches of {args.batch_size}, "
          f"{args.runs} runs")
    print(f"  validation per batch: {med['without']:.2f} s without, {med['with']:.2f} s with "
          f"the evidence: {med['with'] / med['without']:.2f}x (target <= 1.3)")
    print(f"  job wall per batch:   {med['wall_without']:.2f} s without, {med['wall_with']:.2f} s "
          f"with: {med['wall_with'] / med['wall_without']:.2f}x")
    for label, words in (("first", "first job (baseline only)"),
                         ("second", "second job (with the first's figures)")):
        print(f"  forecast error, {words}: validation runs "
              f"{100 * statistics.mean(errors[f'runs_{label}']):.0f}%, wall time "
              f"{100 * statistics.mean(errors[f'wall_{label}']):.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=3)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--python", action="append", default=[],
                        help="the repository's interpreter (repeat for several; default python)")
    args = parser.parse_args()
    print("evidence cost per batch (real tests in the sandbox, with against without)")
    for python in args.python or ["python"]:
        if "/" in python:  # a path: the config names the program, found first on PATH
            os.environ["PATH"] = f"{Path(python).parent}{os.pathsep}{os.environ['PATH']}"
            python = Path(python).name
        measure(args, python)


if __name__ == "__main__":
    main()
