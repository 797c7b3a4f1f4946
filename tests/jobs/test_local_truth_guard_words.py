"""What the guard says of a file is what git says happened to it (issue 41.5): a deleted test
file is "deletes a test file", never "edits". Through the real `stepwise run`."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import NUMBER, build_sample, cli, config_text, write_issue
from tests.kit.repos import commit_all

# Rewrites old_sum() in its files and, beyond its batch, deletes a test file.
CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
Path("tests/test_extra.py").unlink()
'''


def test_a_deleted_test_file_is_said_to_be_deleted(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=3))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    (repo / "tests/test_extra.py").write_text("import unittest\n")
    commit_all(repo, "the codemod and an extra test file")
    issue = write_issue(tmp_path / "issue.md", recipe="command", replace=None, find=None,
                        exclude=None, paths=["calc/alpha/*.py"],
                        run="python tools/codemod.py {files}")
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes")
    assert done.code == 4, done.text
    lines = [" ".join(line.split()) for line in done.out.splitlines()]
    assert ("- tests/test_extra.py: test_edit — deletes a test file; set allow_test_edits: true "
            "in .github/stepwise.yml to allow it") in lines
    assert not any("test_extra.py: test_edit — edits" in line for line in lines)
