"""A split never makes an empty commit (issue 41.5): when the files that pass are files the edit
left alone (a `command` recipe batches every file in scope), the batch is skipped with "nothing
to change" and the reason, and only the culprit goes on to its gate. Through the real
`stepwise run` on a real checkout."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.kit.bisect_repos import build, module_path
from tests.kit.local_e2e import branch_commits, cli, load_job
from tests.kit.repos import commit_all

NUMBER = 30
# Renames OLD_NAME in the files it is given that hold it; exits 0.
RENAME = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    text = path.read_text()
    if "OLD_NAME" in text:
        path.write_text(text.replace("OLD_NAME", "NEW_NAME"))
'''


def test_a_split_whose_passing_files_changed_nothing_commits_nothing(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 2, culprits=[0])  # editing mod_00 breaks the suite
    (repo / module_path(1)).write_text('"""Module 1."""\n\nNAME = "SOMETHING_ELSE"\n')
    (repo / "tools").mkdir()
    (repo / "tools/rename.py").write_text(RENAME)
    commit_all(repo, "mod_01 has nothing to rename; the codemod")
    spec = {"recipe": "command", "paths": ["pkg/mod_*.py"],
            "run": "python tools/rename.py {files}"}
    issue = tmp_path / "issue.md"
    issue.write_text("# Rename OLD_NAME\n\n```stepwise\n" + yaml.safe_dump(spec) + "```\n")

    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes")
    assert done.code == 4, done.text
    said = " ".join(done.out.split())
    assert (f"batch 1 split: {module_path(1)} (1 of 2 files) passed") in said
    assert (f"batch 1 split: {module_path(0)} (1 of 2 files) failed") in said

    job = load_job(repo, NUMBER)
    first, culprit = job.batches
    assert first.status == "skipped" and first.commit is None
    assert first.reason == (f"nothing to change: the edit changed only the files set aside "
                            f"({module_path(0)}); {module_path(1)} unchanged")
    assert culprit.files == [module_path(0)] and job.gate is not None and job.gate.batch == 2
    assert branch_commits(repo, job) == []  # no empty "batch 1/2 — pkg/mod_01.py" commit
    status = cli("status", "--repo", repo, "--number", str(NUMBER))
    assert "batch 1/2 —" not in status.out
