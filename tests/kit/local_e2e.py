"""Shared helpers for the end-to-end tests of local mode (no tests here).

A small sample repository: a python package `calc` whose modules, across three directories,
call the deprecated `legacy.old_sum()`; a standard-library unittest suite validates it.
The engine is driven in-process through `jobs.local.LocalSession`, or through the real CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jobs.adapters.store import FileStore
from jobs.adapters.workspace import CommitInfo, Repository
from jobs.engine.engine import Outcome
from jobs.inputs.spec import IssueTask, parse_issue_file
from jobs.kernel.job import Job
from jobs.local import LocalSession
from jobs.ports import Publication
from tests.kit.repos import git, make_repo

ROOT = Path(__file__).resolve().parents[2]
STEPWISE = ROOT / ".venv" / "bin" / "stepwise"
VALIDATE = "python -m unittest discover -s tests -q"
FIND = r"\bold_sum\("
NUMBER = 7

LEGACY = '''"""Summing helpers."""

import warnings


def new_sum(*values):
    return sum(values)


def old_sum(*values):
    """Deprecated: use new_sum()."""
    warnings.warn("old_sum() is deprecated; use new_sum()", DeprecationWarning, stacklevel=2)
    return new_sum(*values)
'''

# module path -> (function name, arguments, expected value)
MODULES: dict[str, tuple[str, str, int]] = {
    "calc/alpha/area.py": ("area", "2, 3", 5),
    "calc/alpha/perimeter.py": ("perimeter", "4, 4, 4", 12),
    "calc/beta/score.py": ("score", "10, 20", 30),
    "calc/beta/total.py": ("total", "1, 2, 3, 4", 10),
    "calc/gamma/stats.py": ("stats", "7, 8", 15),
    "calc/gamma/report.py": ("report", "100, 1", 101),
}
BROKEN_MODULE = "calc/beta/total.py"


def module_source(path: str, *, broken: bool = False) -> str:
    name, args, _ = MODULES[path]
    if broken:
        # Calls the bare name: the `replace` turns it into `new_sum(`, which is not imported.
        return (f'"""{name}."""\n\nfrom calc.legacy import old_sum\n\n\n'
                f"def {name}():\n    return old_sum({args})\n")
    return (f'"""{name}."""\n\nfrom calc import legacy\n\n\n'
            f"def {name}():\n    return legacy.old_sum({args})\n")


def suite_source(*, failing: bool = False) -> str:
    lines = ["import unittest", ""]
    for path in MODULES:
        module = path[:-3].replace("/", ".")
        lines.append(f"from {module} import {MODULES[path][0]}")
    lines += ["", "", "class CalcTests(unittest.TestCase):"]
    for name, _, expected in MODULES.values():
        lines += [f"    def test_{name}(self):", f"        self.assertEqual({name}(), {expected})", ""]
    if failing:
        lines += ["    def test_broken_on_base(self):", "        self.assertEqual(1, 2)", ""]
    lines += ["", 'if __name__ == "__main__":', "    unittest.main()"]
    return "\n".join(lines) + "\n"


def config_text(**overrides: Any) -> str:
    config: dict[str, Any] = {
        "validate": [VALIDATE],
        "allow_commands": ["python"],
        "batch_size": 2,
        "batches_per_milestone": 2,
    }
    config.update(overrides)
    return yaml.safe_dump(config, sort_keys=False)


# A GitHub Actions workflow: what tells Stepwise a repository has CI to wait for.
CI_WORKFLOW = {".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  test:\n"
               "    runs-on: ubuntu-latest\n    steps:\n      - run: python -m pytest -q\n"}


def sample_files(*, broken: bool = False, failing_baseline: bool = False,
                 config: str | None = None) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "README.md": "# calc\n\nA tiny sample package.\n",
        ".github/stepwise.yml": config if config is not None else config_text(),
        "calc/__init__.py": "",
        "calc/legacy.py": LEGACY,
        "calc/alpha/__init__.py": "",
        "calc/beta/__init__.py": "",
        "calc/gamma/__init__.py": "",
        "tests/__init__.py": "",
        "tests/test_calc.py": suite_source(failing=failing_baseline),
    }
    for path in MODULES:
        files[path] = module_source(path, broken=broken and path == BROKEN_MODULE)
    return files


def build_sample(root: Path, **kwargs: Any) -> Path:
    return make_repo(root, sample_files(**kwargs))


def issue_markdown(title: str = "Replace the deprecated legacy.old_sum() with legacy.new_sum()",
                   **spec_overrides: Any) -> str:
    spec: dict[str, Any] = {
        "recipe": "replace",
        "paths": ["calc/**/*.py"],
        "exclude": ["calc/legacy.py"],
        "find": [FIND],
        "replace": "new_sum(",
        "not_doing": ["remove old_sum() itself"],
    }
    for key, value in spec_overrides.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    block = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    return (f"# {title}\n\n`old_sum()` is deprecated and warns on every call; move every caller "
            f"to `new_sum()`.\n\n```stepwise\n{block}```\n")


def issue(**spec_overrides: Any) -> IssueTask:
    return parse_issue_file(issue_markdown(**spec_overrides))


def write_issue(path: Path, **spec_overrides: Any) -> Path:
    path.write_text(issue_markdown(**spec_overrides), encoding="utf-8")
    return path


@dataclass
class Recorder:
    """The sink of a LocalSession: every publication, in order."""

    seen: list[tuple[Publication, str]] = field(default_factory=list)

    def __call__(self, kind: Publication, text: str) -> None:
        self.seen.append((kind, text))

    def texts(self, kind: Publication) -> list[str]:
        return [text for seen_kind, text in self.seen if seen_kind is kind]


def session(repo: Path, number: int = NUMBER, sink: Recorder | None = None) -> LocalSession:
    return LocalSession(repo, number, sink=sink or Recorder())


def load_job(repo: Path, number: int = NUMBER) -> Job:
    job = session(repo, number).store.load(number)
    assert job is not None, "no job record"
    return job


def state_path(repo: Path, number: int = NUMBER) -> Path:
    return repo / ".git" / "stepwise" / f"issue-{number}.json"


def branch_head(repo: Path, branch: str) -> str | None:
    return Repository(repo).branch_head(branch)


def branch_commits(repo: Path, job: Job) -> list[CommitInfo]:
    """The job branch's commits after its base, oldest first."""
    head = branch_head(repo, job.branch)
    assert head is not None
    return Repository(repo).commits(job.base_sha, head)


def batch_commits(commits: list[CommitInfo]) -> list[CommitInfo]:
    return [c for c in commits if "Stepwise-Batch" in c.trailers]


def note_commits(commits: list[CommitInfo]) -> list[CommitInfo]:
    return [c for c in commits if "Stepwise-Note" in c.trailers]


def changed_paths(repo: Path, sha: str) -> list[str]:
    out = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha)
    return [line for line in out.splitlines() if line]


def show(repo: Path, ref: str, path: str) -> str:
    return git(repo, "show", f"{ref}:{path}")


def stepwise_branches(repo: Path) -> list[str]:
    out = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/stepwise/")
    return [line for line in out.splitlines() if line]


def snapshot(repo: Path) -> dict[str, Any]:
    """What must not change when a command is refused: the branches and the state file."""
    state = state_path(repo)
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")
    return {"refs": refs, "state": state.read_text() if state.exists() else None}


def run_tests_at(repo: Path, ref: str, where: Path) -> subprocess.CompletedProcess[str]:
    """Check `ref` out in a separate worktree at `where` and run the sample's tests there."""
    git(repo, "worktree", "add", "--detach", "--quiet", str(where), ref)
    try:
        return subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-q"],
                              cwd=where, capture_output=True, text=True, check=False, timeout=60)
    finally:
        git(repo, "worktree", "remove", "--force", str(where))


def edit_state(repo: Path, change: Any, number: int = NUMBER) -> None:
    """Rewrite the record by hand (what a crash or a human could leave behind): `change` gets
    the whole job as JSON data, batches included."""
    store = FileStore(Repository(repo).state_dir)
    job = store.load(number)
    assert job is not None
    data = job.model_dump(mode="json")
    change(data)
    store.save(Job.model_validate(data))


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def cli(*args: str | Path, env: Mapping[str, str] | None = None) -> CliResult:
    """Run the real `stepwise` command as a subprocess."""
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    done = subprocess.run([str(STEPWISE), *map(str, args)], capture_output=True, text=True,
                          env=full_env, check=False, timeout=120)
    return CliResult(done.returncode, done.stdout, done.stderr)


def assert_exit(outcome: Outcome, code: int) -> None:
    assert outcome.exit_code == code, outcome.message
