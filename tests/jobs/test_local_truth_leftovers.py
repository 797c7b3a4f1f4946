"""Leftovers never repeat the files the same note lists as left out (issue 41.5): a `find` match
in a test file the plan left out (allow_test_edits is off) is named once, under "Left out",
with its rule, not again as a leftover for a human. Through the real `stepwise run`."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import NUMBER, build_sample, cli, load_job, show, write_issue
from tests.kit.repos import commit_all

LEGACY_TEST = '''import unittest

from calc import legacy


class LegacyTests(unittest.TestCase):
    def test_old_sum_still_sums(self):
        self.assertEqual(legacy.old_sum(1, 2), 3)
'''


def test_a_left_out_test_file_is_not_a_leftover(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    (repo / "tests/test_legacy.py").write_text(LEGACY_TEST)
    commit_all(repo, "a test of the legacy function")
    issue = write_issue(tmp_path / "issue.md", paths=["calc/**/*.py", "tests/**/*.py"])
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes")
    assert done.code == 0, done.text
    job = load_job(repo)
    assert [item.path for item in job.left_out] == ["tests/test_legacy.py"]
    note = show(repo, job.branch, job.note_path)
    assert note.count("tests/test_legacy.py") == 1  # under "Left out", with its rule
    leftovers = note.split("## Leftovers for a human to confirm", 1)[1].split("\n## ", 1)[0]
    assert leftovers.strip().splitlines()[0] == "- none", leftovers
    assert job.status == "completed"
    assert "completed with leftovers" not in done.out
