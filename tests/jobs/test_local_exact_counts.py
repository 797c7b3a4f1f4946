"""Every figure from one tally, every sentence from what happened (issue 41.5), through the real
`stepwise run` on a real checkout: a `command` recipe's plan speaks of no targets it does not
have, the files line counts the distinct files the batches changed, commit subjects carry no
Markdown escapes, and the committed note names no path of this machine."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import (
    NUMBER,
    batch_commits,
    branch_commits,
    build_sample,
    cli,
    config_text,
    load_job,
    show,
    write_issue,
)
from tests.kit.repos import commit_all

# Rewrites the files it is given that call old_sum(), leaves the others alone, exits 0.
CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    text = path.read_text()
    if "old_sum(" in text:
        path.write_text(text.replace("old_sum(", "new_sum("))
'''


def command_job(tmp_path: Path) -> tuple[Path, str]:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=3))
    (repo / "tools").mkdir()
    (repo / "tools/codemod.py").write_text(CODEMOD)
    commit_all(repo, "the codemod")
    issue = write_issue(tmp_path / "issue.md", recipe="command", replace=None, find=None,
                        exclude=None, paths=["calc/alpha/*.py", "calc/beta/*.py"],
                        run="python tools/codemod.py {files}")
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes")
    assert done.code == 0, done.text
    return repo, done.out


def test_a_command_job_counts_and_says_only_what_happened(tmp_path: Path) -> None:
    repo, out = command_job(tmp_path)
    said = " ".join(out.split())
    # No `find`: no targets, in any words, and nothing about another recipe.
    assert "Files in scope: 6; every file in scope is batched (no find, so no targets)" in said
    assert "target" not in said.replace("no targets", "")
    assert "a command recipe has no targets" not in said

    job = load_job(repo)
    planned = sum(len(b.files) for b in job.batches if b.status == "completed")
    changed = sorted({p for b in job.batches for p in b.changed_files})
    assert changed == ["calc/alpha/area.py", "calc/alpha/perimeter.py", "calc/beta/score.py",
                       "calc/beta/total.py"]
    assert planned == 6  # the __init__.py files were batched but the codemod left them alone
    note = show(repo, job.branch, job.note_path)
    assert "; files: 4 committed" in note and "files: 6 committed" not in note

    # Commit subjects are plain text: `__init__.py`, not `\_\_init\_\_.py`.
    subjects = [c.subject for c in batch_commits(branch_commits(repo, job))]
    assert subjects == [
        f"stepwise(#{NUMBER}): batch 1/2 — calc/alpha/__init__.py, calc/alpha/area.py, "
        "calc/alpha/perimeter.py",
        f"stepwise(#{NUMBER}): batch 2/2 — calc/beta/__init__.py, calc/beta/score.py, "
        "calc/beta/total.py"]

    # The committed note names no path of this machine; its command runs from the checkout.
    assert str(repo) not in note and str(tmp_path) not in note
    assert f"(`stepwise revert --repo . --number {NUMBER} BATCH`)" in note
