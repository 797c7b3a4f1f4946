"""A sample repository for the edit-shapes tests (no tests here): eight modules whose calls of
`old_helper` take two shapes (`a = old_helper(1)`, `total += old_helper(2)`), and one module with
a third, seen once (`c = old_helper("x" * 2)`); every line runs under the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from jobs.inputs.spec import IssueTask, parse_issue_file
from tests.kit.repos import make_repo

FILLER = ["    total += 1"] * 7  # keeps each change its own hunk (3 lines of context each side)
SHAPE_A, SHAPE_B, OUTLIER = "    a = old_helper(1)", "    total += old_helper(2)", \
    '    c = old_helper("x" * 2)'


def module(*, outlier: bool) -> str:
    body = ["    total = 0", SHAPE_A, *FILLER, SHAPE_B, *FILLER, SHAPE_A]
    if outlier:
        body += [*FILLER, OUTLIER]
    return ("from pkg.helpers import new_helper, old_helper  # noqa: F401\n\n\ndef run():\n"
            + "\n".join(body) + "\n    return total\n")


def shapes_repo(root: Path, *, outlier_in: int, config: dict[str, Any] | None = None) -> Path:
    """Modules m1..m8, two a batch, one batch a milestone; `outlier_in` holds the outlier."""
    settings: dict[str, Any] = {"validate": ["python -m pytest -q -p no:cacheprovider"],
                                "allow_commands": ["python"], "batch_size": 2,
                                "batches_per_milestone": 1}
    settings.update(config or {})
    files = {".github/stepwise.yml": yaml.safe_dump(settings, sort_keys=False),
             "pkg/__init__.py": "",
             "pkg/helpers.py": "def old_helper(x):\n    return 1\n\n\ndef new_helper(x):\n"
                               "    return 1\n"}
    names = [f"m{n}" for n in range(1, 9)]
    for number, name in enumerate(names, start=1):
        files[f"pkg/{name}.py"] = module(outlier=number == outlier_in)
    files["tests/test_all.py"] = "".join(f"from pkg import {n}\n" for n in names) + \
        "\n\ndef test_all():\n" + "".join(f"    assert {n}.run() > 0\n" for n in names)
    return make_repo(root, files)


def shapes_issue() -> IssueTask:
    spec = {"recipe": "replace", "paths": ["pkg/m*.py"], "find": [r"\bold_helper\("],
            "replace": "new_helper("}
    return parse_issue_file("# Use new_helper\n\nMove callers.\n\n```stepwise\n"
                            + yaml.safe_dump(spec, sort_keys=False) + "```\n")
