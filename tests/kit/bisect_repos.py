"""Repositories with planted culprits, for the split-batch (bisection) tests and benchmark.

`pkg/mod_NN.py` each hold `NAME = "OLD_NAME"`; the job replaces `OLD_NAME` with `NEW_NAME`.
The unittest suite fails when a culprit module is edited, or when every file of an
interaction (two files or more) is. A validation counter wraps the sandbox: it counts (and can break at)
the validation runs, the `python -m unittest` commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from jobs.adapters.sandbox import make_sandbox
from jobs.inputs.spec import IssueTask, parse_issue_file
from tests.kit.repos import make_repo

VALIDATE = "python -m unittest discover -s tests -q"
# The same suite run by pytest, whose summary names the failing tests (a split validates its
# parts on those first: jobs/features/bisect/strategy.py).
VALIDATE_PYTEST = "python -m pytest -q -p no:cacheprovider tests"
NUMBER = 30


def module_path(index: int) -> str:
    return f"pkg/mod_{index:02d}.py"


def suite(count: int, culprits: Sequence[int], pairs: Sequence[tuple[int, ...]],
          slow_s: float = 0) -> str:
    lines = ["import time", "import unittest", "", "import pkg", ""]
    lines += [f"from pkg import mod_{i:02d}" for i in range(count)]
    lines += ["", "", "class ModuleTests(unittest.TestCase):",
              "    def test_every_module_has_a_name(self):",
              f"        self.assertEqual(len(pkg.__all__), {count})", ""]
    if slow_s:  # an expensive suite: running only the failing tests is much cheaper
        lines += ["    def test_the_slow_part(self):", f"        time.sleep({slow_s})", ""]
    for index in culprits:
        lines += [f"    def test_mod_{index:02d}_keeps_its_old_name(self):",
                  f'        self.assertEqual(mod_{index:02d}.NAME, "OLD_NAME")', ""]
    for group in pairs:
        names = "_and_".join(f"{i:02d}" for i in group)
        same = " == ".join(f"mod_{i:02d}.NAME" for i in group)
        lines += [f"    def test_mod_{names}_not_all_new(self):",
                  f'        every = {same} == "NEW_NAME"',
                  "        self.assertFalse(every)", ""]
    return "\n".join(lines) + "\n"


def repo_files(count: int, culprits: Sequence[int] = (), pairs: Sequence[tuple[int, ...]] = (),
               slow_s: float = 0, **config: Any) -> dict[str, str | bytes]:
    settings: dict[str, Any] = {"validate": [VALIDATE], "allow_commands": ["python"],
                                "batch_size": 6, "batches_per_milestone": 100}
    settings.update(config)
    files: dict[str, str | bytes] = {
        ".github/stepwise.yml": yaml.safe_dump(settings, sort_keys=False),
        "pkg/__init__.py": "__all__ = [" + ", ".join(
            f'"mod_{i:02d}"' for i in range(count)) + "]\n",
        "tests/__init__.py": "",
        "tests/test_modules.py": suite(count, culprits, pairs, slow_s),
    }
    for index in range(count):
        files[module_path(index)] = f'"""Module {index}."""\n\nNAME = "OLD_NAME"\n'
    return files


def build(root: Path, count: int, culprits: Sequence[int] = (),
          pairs: Sequence[tuple[int, ...]] = (), slow_s: float = 0, **config: Any) -> Path:
    return make_repo(root, repo_files(count, culprits, pairs, slow_s, **config))


def rename_issue(**spec: Any) -> IssueTask:
    block = {"recipe": "replace", "paths": ["pkg/mod_*.py"], "find": ["OLD_NAME"],
             "replace": "NEW_NAME", **spec}
    text = yaml.safe_dump(block, sort_keys=False)
    return parse_issue_file(f"# Rename OLD_NAME to NEW_NAME\n\n```stepwise\n{text}```\n")


class Killed(Exception):
    """The worker 'died' in the middle of a validation."""


@dataclass
class CountingSandbox:
    """The real sandbox, counting validation runs (unittest or pytest; `focused`: the pytest
    runs of named tests only); `break_at` raises Killed at that run."""

    break_at: int | None = None
    validations: int = 0
    focused: int = 0
    subsets: list[str] = field(default_factory=list)
    inner: Any = field(default_factory=lambda: make_sandbox(require_isolation=False))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)

    def run(self, argv: Sequence[str], **kwargs: Any) -> Any:
        if "unittest" in argv or "pytest" in argv:
            self.validations += 1
            self.focused += any(".py::" in arg for arg in argv)
            if self.break_at is not None and self.validations == self.break_at:
                raise Killed(f"killed at validation {self.validations}")
            cwd = kwargs["cwd"]
            self.subsets.append(",".join(sorted(
                p.name for p in (cwd / "pkg").glob("mod_*.py")
                if "NEW_NAME" in p.read_text(encoding="utf-8"))))
        return self.inner.run(argv, **kwargs)
