"""The long-lived `git cat-file --batch-command` (jobs/adapters/object_reader.py): one process
answers refs, trees and files, sees what other processes change meanwhile (a branch moved, a new
commit), and a process that dies or cannot start leaves the answers to a one-shot git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.adapters import object_reader
from jobs.adapters.object_reader import ObjectReader
from jobs.adapters.workspace import Repository
from tests.kit.repos import git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"a.txt": "hello\n", "b.bin": "x\0y", "dir/c.py": "c\n"})


def test_one_process_answers_refs_trees_and_files(repo: Path) -> None:
    repository = Repository(repo)
    head = git(repo, "rev-parse", "HEAD")
    assert repository.branch_head("main") == head
    assert repository.resolve("HEAD") == head
    assert repository.branch_head("no-such-branch") is None
    assert repository.tree_of(head) == git(repo, "rev-parse", "HEAD^{tree}")
    assert repository.read_texts(head, ["a.txt", "b.bin", "dir/c.py", "missing", "dir"]) == {
        "a.txt": "hello\n", "b.bin": None, "dir/c.py": "c\n", "missing": None, "dir": None}
    assert repository.objects.session.started == 1
    repository.close()


def test_it_sees_a_branch_moved_and_a_commit_made_by_another_process(repo: Path) -> None:
    repository = Repository(repo)
    before = repository.branch_head("main")
    assert before is not None
    git(repo, "commit", "-q", "--allow-empty", "-m", "a person's commit")
    after = git(repo, "rev-parse", "HEAD")
    assert after != before
    assert repository.branch_head("main") == after
    assert repository.tree_of(after) == git(repo, "rev-parse", "HEAD^{tree}")
    git(repo, "branch", "made-later")
    git(repo, "pack-refs", "--all")  # a ref only in packed-refs now
    git(repo, "update-ref", "refs/heads/made-later", before)
    assert repository.branch_head("made-later") == before
    assert repository.objects.session.started == 1
    repository.close()


def test_many_large_files_are_read_without_either_side_waiting(repo: Path) -> None:
    big = "line\n" * 40_000  # 200 kB each: more than a pipe holds
    files = {f"big/{n:04}.txt": big for n in range(30)}
    files |= {f"small/{n:05}-{'x' * 60}.txt": f"{n}\n" for n in range(2_000)}  # > 32 kB asked
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many")
    repository = Repository(repo)
    assert repository.read_texts(git(repo, "rev-parse", "HEAD"), list(files)) == files
    repository.close()


def test_a_process_that_dies_is_started_again_between_questions(repo: Path) -> None:
    repository = Repository(repo)
    head = repository.branch_head("main")
    process = repository.objects.session._process
    assert process is not None
    process.kill()
    process.wait()
    assert repository.branch_head("main") == head
    assert repository.objects.session.started == 2
    repository.close()


def test_without_the_long_lived_process_one_shot_git_answers(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A git without `--batch-command` (before 2.36) exits at once: the same answers come from
    one-shot `git cat-file --batch` calls."""
    monkeypatch.setattr(object_reader, "COMMAND", ["cat-file", "--no-such-option"])
    reader = ObjectReader(cwd=repo, git_dir=repo / ".git")
    head = git(repo, "rev-parse", "HEAD")
    found = reader.info("refs/heads/main^{commit}")
    assert found is not None and (found.oid, found.type) == (head, "commit")
    assert reader.info("refs/heads/nothing^{commit}") is None
    texts = reader.contents([f"{head}:a.txt", f"{head}:missing", f"{head}:dir/c.py"])
    assert [t.data if t else None for t in texts] == [b"hello\n", None, b"c\n"]
    assert reader.session.started == 1 and reader.session._process is None  # tried once, then one-shot
    reader.close()


def test_a_name_with_a_line_break_is_never_sent(repo: Path) -> None:
    repository = Repository(repo)
    assert repository.resolve("main\nrefs/heads/main") is None
    with pytest.raises(ValueError, match="line break"):
        repository.objects.info("HEAD\n")
    repository.close()


def test_a_forked_child_starts_its_own_process(repo: Path) -> None:
    """A worker that forks (a work-horse) never writes to its parent's reader: the child asks
    its own, and the parent's still answers it."""
    repository = Repository(repo)
    head = repository.branch_head("main")
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when its answer is right and came from its own git
        ok = repository.branch_head("main") == head and repository.objects.session.started == 2
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert repository.branch_head("main") == head and repository.objects.session.started == 1
    repository.close()
