"""The sample repository every trial's job runs on: files that each need one replacement,
validated by a unittest suite, and the issue that asks for it."""

from __future__ import annotations

import yaml

from tests.kit.chaos.settings import FILES, VALIDATE

LEGACY = '''"""Totals."""


def new_total(*values):
    return sum(values)


def old_total(*values):
    """Deprecated: use new_total()."""
    return new_total(*values)
'''

ISSUE_TITLE = "Move every caller of legacy.old_total() to legacy.new_total()"
ISSUE_BODY = """`old_total()` is deprecated.

```stepwise
recipe: replace
paths: ["app/**/*.py"]
exclude: ["app/legacy.py"]
find: ['\\bold_total\\(']
replace: 'new_total('
```
"""


def part_path(number: int) -> str:
    return f"app/part{number:02d}.py"


def sample_repo(*, files: int = FILES, require_plan_approval: bool = False,
                batches_per_milestone: int | None = None) -> dict[str, str | bytes]:
    """`files` modules each calling `legacy.old_total()` once, and a unittest suite over them;
    one batch per file, all in one milestone unless `batches_per_milestone` says otherwise."""
    config = {"validate": [VALIDATE], "allow_commands": ["python"], "batch_size": 1,
              "batches_per_milestone": batches_per_milestone or max(files, 12),
              "require_plan_approval": require_plan_approval,
              "ci": {"wait": "off"}}  # no CI here: with it on, each milestone waits out the grace
    tree: dict[str, str | bytes] = {
        "README.md": "# app\n",
        ".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False),
        "app/__init__.py": "",
        "app/legacy.py": LEGACY,
        "tests/__init__.py": "",
    }
    tests = ["import unittest", ""]
    for number in range(1, files + 1):
        tree[part_path(number)] = (f'"""Part {number}."""\n\nfrom app import legacy\n\n\n'
                                   f"def value():\n    return legacy.old_total({number}, 1)\n")
        tests.append(f"from app.part{number:02d} import value as value{number:02d}")
    tests += ["", "", "class PartsTest(unittest.TestCase):"]
    for number in range(1, files + 1):
        tests += [f"    def test_part{number:02d}(self):",
                  f"        self.assertEqual(value{number:02d}(), {number + 1})", ""]
    tree["tests/test_parts.py"] = "\n".join(tests) + "\n"
    return tree
