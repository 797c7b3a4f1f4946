"""A codemod's non-zero exit is read only as far as what happened says (issue 41.5): a program
that exits 1 because it rewrote files (pyupgrade, `ruff --fix` style) is not said to have
"reported findings it did not fix"; the spec's `changed_exit_codes` names such an exit. Through
the real `stepwise run` on a real checkout."""

from __future__ import annotations

from pathlib import Path

from tests.kit.local_e2e import NUMBER, build_sample, cli, config_text, load_job, show, write_issue
from tests.kit.repos import commit_all

# Like pyupgrade: rewrites what it can, prints "Rewriting <file>", exits 1 when it rewrote any.
REWRITER = '''import sys
from pathlib import Path

rewrote = False
for name in sys.argv[1:]:
    path = Path(name)
    text = path.read_text()
    if "old_sum(" in text:
        path.write_text(text.replace("old_sum(", "new_sum("))
        print(f"Rewriting {name}")
        rewrote = True
sys.exit(1 if rewrote else 0)
'''


def run(tmp_path: Path, **spec: object) -> str:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=3))
    (repo / "tools").mkdir()
    (repo / "tools/rewriter.py").write_text(REWRITER)
    commit_all(repo, "the rewriter")
    issue = write_issue(tmp_path / "issue.md", recipe="command", replace=None, find=None,
                        exclude=None, paths=["calc/alpha/*.py"],
                        run="python tools/rewriter.py {files}", **spec)
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes")
    assert done.code == 0, done.text
    job = load_job(repo)
    note = show(repo, job.branch, job.note_path)
    assert "findings it did not fix" not in note and "reported findings" not in note
    assert "changed what it could" not in note
    return " ".join(note.split())


def test_an_exit_1_after_rewriting_files_is_said_as_it_happened(tmp_path: Path) -> None:
    note = run(tmp_path)
    assert ("perimeter.py` changed 2 files of 3; it exited 1 and printed no "
            "`path:line` finding (a codemod that exits 1 when it rewrites files can say so: "
            "`changed_exit_codes: [1]`)") in note
    assert "exited 1 (2 lines of output, last: `Rewriting calc/alpha/perimeter.py`)" in note


def test_changed_exit_codes_says_the_exit_means_it_rewrote_files(tmp_path: Path) -> None:
    note = run(tmp_path, changed_exit_codes=[1])
    assert "changed 2 files of 3; exit 1, which `changed_exit_codes` says means it rewrote " \
        "files" in note
