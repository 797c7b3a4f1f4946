"""Benchmark: a local job against its floor (issue 27, "fixed costs once").

    .venv/bin/python -m bench.local_floor [--modules 5] [--runs 1]

Generated small repositories, Python (a unittest suite) and, when `node` is on the PATH,
JavaScript (`node --test`), each with one deprecated call per module. For each: a 1-batch job
(every module in one batch) and a 5-batch job (one module per batch), each run twice in the
same checkout (the first job, then a repeat job under a new number on a fresh copy of the base,
so caches kept beside the checkout's state are warm), by the real engine with the default
sandbox, against the floor: the same edits by hand, the tests once per batch and a
`git commit` per batch. Prints seconds and the ratio job/floor (targets: repeat 1-batch
<= 2x, 5-batch <= 1.3x).
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

from bench._common import machine_facts  # noqa: E402
from jobs.adapters.sandbox import make_sandbox  # noqa: E402
from jobs.inputs.spec import parse_issue_file  # noqa: E402
from jobs.local import LocalSession  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
LANGUAGES = {
    "python": {"validate": "python -m unittest discover -s tests -q", "program": "python",
               "glob": "src/**/*.py", "ext": "py"},
    "javascript": {"validate": "node --test test/", "program": "node", "glob": "src/**/*.js",
                   "ext": "js"},
}
ISSUE = """# Replace old_api with new_api

```stepwise
recipe: replace
paths: ["{glob}"]
exclude: ["src/api.*"]
find: ['\\bold_api\\(']
replace: 'new_api('
```
"""
PATTERN = re.compile(r"\bold_api\(")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True,
                          check=True).stdout


def build(path: Path, language: str, modules: int, batch_size: int) -> None:
    lang = LANGUAGES[language]
    (path / ".github").mkdir(parents=True)
    (path / ".github" / "stepwise.yml").write_text(
        f"validate: ['{lang['validate']}']\nallow_commands: [{lang['program']}]\n"
        f"batch_size: {batch_size}\nbatches_per_milestone: 100\nrequire_plan_approval: false\n")
    (path / "src").mkdir()
    if language == "python":
        (path / "src" / "__init__.py").write_text("")
        (path / "src" / "api.py").write_text("def old_api(x):\n    return x\n\n\n"
                                             "def new_api(x):\n    return x\n")
        (path / "tests").mkdir()
        (path / "tests" / "__init__.py").write_text("")
        for index in range(modules):
            (path / "src" / f"m{index}.py").write_text(
                f"from src.api import new_api, old_api\n\n\ndef f{index}(x):\n"
                f"    return old_api(x) + {index}\n")
            (path / "tests" / f"test_m{index}.py").write_text(
                f"import unittest\n\nfrom src.m{index} import f{index}\n\n\n"
                f"class T(unittest.TestCase):\n    def test_f(self):\n"
                f"        self.assertEqual(f{index}(1), {index + 1})\n")
    else:
        (path / "src" / "api.js").write_text("exports.old_api = (x) => x;\n"
                                             "exports.new_api = (x) => x;\n")
        (path / "test").mkdir()
        for index in range(modules):
            (path / "src" / f"m{index}.js").write_text(
                f"const {{ old_api, new_api }} = require('./api');\n"
                f"exports.f = (x) => old_api(x) + {index};\n")
            (path / "test" / f"m{index}.test.js").write_text(
                f"const test = require('node:test');\nconst assert = require('node:assert');\n"
                f"test('m{index}', () => assert.strictEqual(require('../src/m{index}').f(1), "
                f"{index + 1}));\n")
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "b")  # local commits are made as the checkout's identity
    git(path, "config", "user.email", "b@example.invalid")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")


def floor(path: Path, language: str, batches: list[list[Path]]) -> float:
    """The same edits by hand, the tests once per batch, a commit per batch."""
    validate = LANGUAGES[language]["validate"].split()
    worktree = path.parent / f"floor-{time.monotonic_ns()}"
    git(path, "worktree", "add", "-q", "--detach", str(worktree), "main")
    started = time.perf_counter()
    for files in batches:
        for relative in files:
            module = worktree / relative
            module.write_text(PATTERN.sub("new_api(", module.read_text()))
        subprocess.run(validate, cwd=worktree, check=True, capture_output=True)
        git(worktree, "commit", "-q", "-am", "edit")
    elapsed = time.perf_counter() - started
    git(path, "worktree", "remove", "--force", str(worktree))
    return elapsed


def job(path: Path, language: str, number: int) -> float:
    issue = parse_issue_file(ISSUE.replace("{glob}", LANGUAGES[language]["glob"]))
    started = time.perf_counter()
    outcome = LocalSession(path, number, sink=lambda kind, text: None,
                           sandbox=make_sandbox(require_isolation=False)).run(issue, yes=True)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0, outcome.message
    return elapsed


def measure(language: str, modules: int, batch_size: int, runs: int) -> dict[str, float]:
    figures: dict[str, list[float]] = {"floor": [], "first job": [], "repeat job": []}
    for _ in range(runs):
        with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
            path = Path(tmp) / "repo"
            build(path, language, modules, batch_size)
            files = [Path("src") / f"m{i}.{LANGUAGES[language]['ext']}" for i in range(modules)]
            batches = [files[i:i + batch_size] for i in range(0, modules, batch_size)]
            figures["floor"].append(floor(path, language, batches))
            figures["first job"].append(job(path, language, 1))
            figures["repeat job"].append(job(path, language, 2))
    return {name: statistics.median(values) for name, values in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description="A local job against its floor.")
    parser.add_argument("--modules", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(machine_facts())
    languages = ["python"] + (["javascript"] if shutil.which("node") else [])
    for language in languages:
        for label, size in (("1-batch", args.modules), (f"{args.modules}-batch", 1)):
            got = measure(language, args.modules, size, args.runs)
            base = got["floor"]
            print(f"{language:10} {label:8} floor {base:6.2f} s · first job "
                  f"{got['first job']:6.2f} s ({got['first job'] / base:4.1f}x) · repeat job "
                  f"{got['repeat job']:6.2f} s ({got['repeat job'] / base:4.1f}x)")


if __name__ == "__main__":
    main()
