"""Leftovers on a real repository in local mode: a codemod's findings printed with absolute
sandbox paths (eslint's stylish format, as express showed) are mapped back to repository
paths and listed with the line's text in the change note."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from tests.kit.local_e2e import assert_exit, build_sample, config_text, issue, load_job, session, show
from tests.kit.repos import commit_all

pytestmark = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")

# Fixes the calls, then reports what it left like `eslint --format stylish`: the file's
# absolute path (in the sandbox, /tmp/stepwise/repo/...) on a line, then its findings.
CODEMOD = '''import os
import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    text = path.read_text()
    if "old_sum(" in text:
        path.write_text(text.replace("old_sum(", "new_sum("))
        print(os.path.abspath(name))
        print("  3:1  warning  Imports the module, not the function  prefer-direct")
        print()
print("2 problems (0 errors, 2 warnings)")
sys.exit(1)
'''


def test_absolute_sandbox_paths_become_leftovers_with_their_line_text(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=3))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    commit_all(repo, "the codemod")
    spec = issue(recipe="command", replace=None, find=None, exclude=None,
                 paths=["calc/alpha/*.py"], run="python tools/codemod.py {files}")
    assert_exit(session(repo).run(spec, yes=True), 0)
    job = load_job(repo)
    expected = [f"{path}:3 — Imports the module, not the function (prefer-direct) "
                "(the line: from calc import legacy)"
                for path in ("calc/alpha/area.py", "calc/alpha/perimeter.py")]
    assert job.batch(1).leftovers == expected
    note = show(repo, job.branch, job.note_path)
    listed = note.split("## Leftovers for a human to confirm", 1)[1]
    assert [line for line in listed.splitlines() if line.startswith("- ")] == \
        [f"- `{item}`" for item in expected]
    # No finding's sandbox path reaches the note (the Sandbox line names only its mount point).
    assert "/tmp/stepwise/repo/calc" not in note
