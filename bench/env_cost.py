"""Benchmark: what a cached job environment costs per batch, beside a job without setup.

    .venv/bin/python -m bench.env_cost [--batches 10] [--runs 2]

Two local repositories of N modules (one match each; jobs of N batches of one file, one
milestone, the real engine in bubblewrap):
- "environment": validation is the environment's own `pytest`, whose tests import `six`
  (from PyPI) and the package itself (an editable install), so it needs what `setup`
  (`python -m venv .venv`, `pip install -e .[test]`, `network: setup`) installed. The first job
  builds the environment (its setup time is reported apart); the later jobs reuse it.
- "no setup": the same modules without `six`, validated by the worker's own `python -m pytest`
  with `PYTHONPATH: src`: nothing installed (both without plugins or pytest's cache).
Per batch is the span from the first batch's attempt to the end of the last one, over N (the
plan, baseline, setup and final review are left out). Prints the medians, the ratio (target
<= 1.2x) and the first job's setup time. Needs the network to PyPI (through the egress proxy).
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
# `python` on the sandbox's PATH is this interpreter: setup makes the virtualenv from it.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

from jobs.adapters.sandbox import bubblewrap_available  # noqa: E402
from jobs.features.environments.record import environment_of  # noqa: E402
from jobs.inputs.spec import parse_issue_file  # noqa: E402
from jobs.kernel.job import Job  # noqa: E402
from jobs.local import LocalSession  # noqa: E402
from tests.kit.env_repos import PYPROJECT  # noqa: E402
from tests.kit.repos import make_repo  # noqa: E402

ENV_CONFIG = """\
setup: ["python -m venv .venv", "pip install --disable-pip-version-check -e .[test]"]
validate: ["pytest -q -p no:cacheprovider"]
allow_commands: [python, pip, pytest]
network: setup
cache_key: ["pyproject.toml"]
env: {PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1"}
"""
PLAIN_CONFIG = """\
validate: ["python -m pytest -q -p no:cacheprovider"]
allow_commands: [python]
env: {PYTHONPATH: src, PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1"}
"""
COMMON = "batch_size: 1\nbatches_per_milestone: {batches}\nrequire_plan_approval: false\n"
ISSUE = """# Rename old_format to fmt

```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bold_format\\b']
replace: 'fmt'
```
"""


def module(index: int, *, six: bool) -> str:
    value = "six.text_type(old_format(value))" if six else "str(old_format(value))"
    return (f'"""m{index}."""\n\n' + ("import six\n\n\n" if six else "\n")
            + f"def m{index}(value):\n    return {value}\n\n\n"
            "def old_format(value):\n    return \"<%s>\" % value\n")


def build(root: Path, batches: int, *, environment: bool) -> Path:
    config = (ENV_CONFIG if environment else PLAIN_CONFIG) + COMMON.format(batches=batches)
    files: dict[str, str | bytes] = {".github/stepwise.yml": config, ".gitignore": ".venv/\n",
                                     "src/shapes/__init__.py": ""}
    imports, checks = [], []
    for index in range(batches):
        files[f"src/shapes/m{index}.py"] = module(index, six=environment)
        imports.append(f"from shapes.m{index} import m{index}")
        checks.append(f"    assert m{index}({index}) == '<{index}>'")
    files["tests/test_shapes.py"] = "\n".join([*imports, "", "", "def test_all():", *checks, ""])
    if environment:
        files["pyproject.toml"] = PYPROJECT
    return make_repo(root, files)


def run_job(repo: Path, number: int) -> tuple[Job, float]:
    session = LocalSession(repo, number, sink=lambda kind, text: None)
    started = time.perf_counter()
    outcome = session.run(parse_issue_file(ISSUE), yes=True)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0, outcome.message
    job = session.store.load(number)
    assert job is not None
    return job, elapsed


def per_batch(job: Job) -> float:
    attempts = [a for b in job.batches for a in b.attempts]
    assert attempts and all(a.finished_at is not None for a in attempts)
    end = max(a.finished_at for a in attempts if a.finished_at is not None)
    return (end - min(a.started_at for a in attempts)).total_seconds() / len(job.batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    if not bubblewrap_available():
        raise SystemExit("bubblewrap is needed: environments are cached only in the sandbox")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        env_repo = build(Path(tmp) / "env", args.batches, environment=True)
        plain_repo = build(Path(tmp) / "plain", args.batches, environment=False)
        first, first_wall = run_job(env_repo, 1)
        built = environment_of(first)
        assert built is not None and not built.from_cache
        setup_s = sum(c.duration_s for c in built.setup)
        cached, plain, cached_wall, plain_wall = [], [], [], []
        for run in range(args.runs):
            job, wall = run_job(env_repo, 2 + run)
            reused = environment_of(job)
            assert reused is not None and reused.from_cache
            cached.append(per_batch(job))
            cached_wall.append(wall)
            job, wall = run_job(plain_repo, 1 + run)
            plain.append(per_batch(job))
            plain_wall.append(wall)
    version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout
    print(f"{args.batches}-batch local job, median of {args.runs}; Python "
          f"{sys.version.split()[0]}, {os.cpu_count()} cores, {version.strip()}")
    print(f"first job: setup {setup_s:.1f} s (built the environment), whole job "
          f"{first_wall:.1f} s, {per_batch(first) * 1e3:.0f} ms/batch")
    rows = {"environment, cached": (cached, cached_wall), "no setup": (plain, plain_wall)}
    for name, (batches, walls) in rows.items():
        print(f"{name:<22}{statistics.median(batches) * 1e3:>7.0f} ms/batch"
              f"   whole job {statistics.median(walls):>6.1f} s")
    ratio = statistics.median(cached) / statistics.median(plain)
    print(f"per-batch ratio {ratio:.2f}x; target <= 1.2x: {'met' if ratio <= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
