"""A generated repository shaped like dateutil's pyupgrade + F401 job (issue 30), for the
split-batch benchmark: dateutil's 17 modules (as `dateish/`), each with one import ruff's F401
calls unused, and a unittest suite of test modules, one per area as dateutil's. The job
removes every such import. In `dateish/relativedelta.py` that import is a re-export that
`tests/test_imports.py` imports (as dateutil's does `from dateutil.relativedelta import
weekday`), so removing it breaks exactly that one test module, and nothing else; it is the
fifth file of the first batch of 5 (the planner keeps a directory's files together).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from jobs.inputs.spec import IssueTask, parse_issue_file
from tests.kit.repos import make_repo

VALIDATE = "python -m unittest discover -s tests -q"
NUMBER = 31
CULPRIT = "dateish/relativedelta.py"
MODULES = [
    "dateish/__init__.py", "dateish/_common.py", "dateish/_version.py", "dateish/easter.py",
    "dateish/relativedelta.py", "dateish/rrule.py", "dateish/utils.py",
    "dateish/parser/__init__.py", "dateish/parser/_parser.py", "dateish/parser/isoparser.py",
    "dateish/tz/__init__.py", "dateish/tz/_common.py", "dateish/tz/tz.py", "dateish/tz/win.py",
    "dateish/zoneinfo/__init__.py", "dateish/zoneinfo/rebuild.py", "dateish/zoneinfo/_data.py",
]
TEST_AREAS = ["easter", "relativedelta", "rrule", "utils", "parser", "isoparser", "tz",
              "zoneinfo", "common", "version", "imports"]


def _module(path: str) -> str:
    name = path[:-3].replace("/", "_").replace("_init__", "init")
    if path == CULPRIT:  # a re-export: unused here, imported by tests/test_imports.py
        unused = "from dateish._common import weekday  # F401\n"
    elif path == "dateish/_common.py":
        unused = "import os  # F401\n"
    else:
        unused = "from dateish._common import NAME  # F401\n"
    extra = '\nNAME = "dateish"\n\n\nclass weekday:\n    """MO, TU, ..."""\n' \
        if path == "dateish/_common.py" else ""
    return f'"""{path}."""\n\n{unused}\n\ndef {name}():\n    return "{path}"\n{extra}'


def _test_module(area: str) -> str:
    if area == "imports":
        return ("import unittest\n\n\nclass ImportsTest(unittest.TestCase):\n"
                "    def test_relativedelta_reexports_weekday(self):\n"
                "        from dateish.relativedelta import weekday\n"
                "        self.assertEqual(weekday.__name__, 'weekday')\n")
    modules = [m for m in MODULES if area in m.replace("_", "")] or [MODULES[0]]
    lines = ["import importlib", "import unittest", "", "",
             f"class {area.title()}Test(unittest.TestCase):"]
    for index, path in enumerate(modules):
        module = path[:-3].replace("/", ".").removesuffix(".__init__")
        lines += [f"    def test_{index}_imports(self):",
                  f"        self.assertTrue(importlib.import_module({module!r}))", ""]
    return "\n".join(lines) + "\n"


def repo_files(**config: Any) -> dict[str, str | bytes]:
    settings: dict[str, Any] = {"validate": [VALIDATE], "allow_commands": ["python"],
                                "batch_size": 5, "batches_per_milestone": 100}
    settings.update(config)
    files: dict[str, str | bytes] = {
        ".github/stepwise.yml": yaml.safe_dump(settings, sort_keys=False),
        "tests/__init__.py": "",
    }
    files.update({path: _module(path) for path in MODULES})
    files.update({f"tests/test_{area}.py": _test_module(area) for area in TEST_AREAS})
    return files


def build(root: Path, **config: Any) -> Path:
    return make_repo(root, repo_files(**config))


def f401_issue() -> IssueTask:
    block = {"recipe": "replace", "paths": ["dateish/**/*.py"],
             "find": [r"^(?:from [\w.]+ )?import \w+  # F401\n"], "replace": ""}
    text = yaml.safe_dump(block, sort_keys=False)
    return parse_issue_file(f"# Remove unused imports (F401)\n\n```stepwise\n{text}```\n")
