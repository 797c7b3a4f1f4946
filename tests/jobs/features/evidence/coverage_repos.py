"""Sample repositories for the changed-line coverage tests (no tests here): a Python package
validated by real pytest, one of whose modules no test imports, and a node package validated
by node's own test runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from jobs.inputs.spec import IssueTask, parse_issue_file
from tests.kit.repos import make_repo

HELPERS = "def old_helper(x):\n    return x * 2\n\n\ndef new_helper(x):\n    return x * 2\n"


def python_module(name: str) -> str:
    return (f'"""{name}."""\n\nfrom pkg.helpers import new_helper, old_helper  # noqa: F401\n\n\n'
            f"def {name}(x):\n    return old_helper(x)\n")


def python_repo(root: Path, *, config: dict[str, Any] | None = None,
                extra: dict[str, str] | None = None) -> Path:
    """`pkg/used.py` is imported by the tests, `pkg/orphan.py` by no test: the replace changes
    line 7 of each."""
    settings: dict[str, Any] = {"validate": ["python -m pytest -q -p no:cacheprovider"],
                                "allow_commands": ["python"], "batch_size": 5}
    settings.update(config or {})
    files = {
        ".github/stepwise.yml": yaml.safe_dump(settings, sort_keys=False),
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/used.py": python_module("used"),
        "pkg/orphan.py": python_module("orphan"),
        "tests/test_used.py": "from pkg.used import used\n\n\ndef test_used():\n"
                              "    assert used(2) == 4\n",
        **(extra or {}),
    }
    return make_repo(root, files)


def python_issue(**overrides: Any) -> IssueTask:
    spec: dict[str, Any] = {"recipe": "replace", "paths": ["pkg/*.py"],
                            "exclude": ["pkg/helpers.py"], "find": [r"\bold_helper\(x\)"],
                            "replace": "new_helper(x)"}
    spec.update(overrides)
    return parse_issue_file("# Use new_helper\n\nMove callers to new_helper.\n\n```stepwise\n"
                            + yaml.safe_dump(spec, sort_keys=False) + "```\n")


NODE_HELPERS = "exports.oldHelper = (x) => x * 2;\nexports.newHelper = (x) => x * 2;\n"


def node_module(name: str) -> str:
    return (f"const {{ oldHelper, newHelper }} = require('./helpers');\n\n"
            f"function {name}(x) {{\n  if (x < 0) {{\n    return oldHelper(-x);\n  }}\n"
            f"  return oldHelper(x);\n}}\n\nmodule.exports = {{ {name}, newHelper }};\n")


def node_repo(root: Path, *, config: dict[str, Any] | None = None) -> Path:
    """`lib/used.js` is required by the test (its negative branch never runs), `lib/orphan.js`
    by nothing: the replace changes lines 5 and 7 of each."""
    settings: dict[str, Any] = {"validate": ["node --test test/"], "allow_commands": ["node"],
                                "batch_size": 5}
    settings.update(config or {})
    files = {
        ".github/stepwise.yml": yaml.safe_dump(settings, sort_keys=False),
        "lib/helpers.js": NODE_HELPERS,
        "lib/used.js": node_module("used"),
        "lib/orphan.js": node_module("orphan"),
        "test/used.test.js": "const test = require('node:test');\n"
                             "const assert = require('node:assert');\n"
                             "const { used } = require('../lib/used');\n\n"
                             "test('used', () => { assert.strictEqual(used(2), 4); });\n",
    }
    return make_repo(root, files)


def node_issue() -> IssueTask:
    spec = {"recipe": "replace", "paths": ["lib/*.js"], "exclude": ["lib/helpers.js"],
            "find": [r"\boldHelper\((-?x)\)"], "replace": r"newHelper(\1)"}
    return parse_issue_file("# Use newHelper\n\nMove callers.\n\n```stepwise\n"
                            + yaml.safe_dump(spec, sort_keys=False) + "```\n")
