"""The diff guard on files deleted, renamed and added, from real staged diffs."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.decisions.guard import Rule
from tests.conftest import RepoFactory
from tests.jobs.decisions.guard_kit import ALL_FLAGS, BASE, SCOPE, assert_refused, found, guard
from tests.kit.repos import git, write_files


@pytest.fixture
def repo(repo_factory: RepoFactory) -> Path:
    return repo_factory(BASE)


# --- deletions and renames ---------------------------------------------------------------


def test_deletion_is_refused_by_default(repo: Path) -> None:
    (repo / "src/util.py").unlink()
    verdict = guard(repo, batch=("src/util.py",))
    violation = assert_refused(verdict, "src/util.py", Rule.DELETION)
    assert "allow_deletions: true" in violation.detail
    assert verdict.deleted_files == ("src/util.py",)
    assert verdict.changed_files == ("src/util.py",)
    assert verdict.lines_removed == 1


def test_deletion_is_lifted_by_allow_deletions(repo: Path) -> None:
    (repo / "src/util.py").unlink()
    verdict = guard(repo, batch=("src/util.py",), allow_deletions=True)
    assert verdict.ok, verdict.describe()
    assert verdict.deleted_files == ("src/util.py",)


def test_deletion_ask_opens_the_deletion_gate(repo: Path) -> None:
    (repo / "src/util.py").unlink()
    verdict = guard(repo, batch=("src/util.py",), allow_deletions="ask")
    assert verdict.violations == ()
    assert verdict.gate == "deletion"
    assert not verdict.ok
    assert "src/util.py" in verdict.describe()


def test_deletion_ask_with_another_violation_refuses_without_a_gate(repo: Path) -> None:
    (repo / "src/util.py").unlink()
    write_files(repo, {"docs/readme.md": "changed\n"})
    verdict = guard(repo, batch=("src/util.py",), allow_deletions="ask")
    assert verdict.gate is None
    assert found(verdict) == {("docs/readme.md", Rule.OUTSIDE_BATCH)}


def test_deleting_a_file_outside_the_batch_is_also_outside_batch(repo: Path) -> None:
    (repo / "docs/readme.md").unlink()
    verdict = guard(repo, batch=("src/app.py",), allow_deletions=True)
    assert found(verdict) == {("docs/readme.md", Rule.OUTSIDE_BATCH)}


def test_rename_is_detected_and_refused(repo: Path) -> None:
    git(repo, "mv", "src/util.py", "src/helpers.py")
    verdict = guard(repo, batch=("src/util.py",), scope=(*SCOPE, "src/helpers.py"))
    violation = assert_refused(verdict, "src/helpers.py", Rule.RENAME)
    assert "src/util.py" in violation.detail
    assert found(verdict) == {("src/helpers.py", Rule.RENAME)}
    assert verdict.changed_files == ("src/helpers.py",)
    assert verdict.deleted_files == () and verdict.added_files == ()


@pytest.mark.parametrize(
    ("deletions", "new_files", "lifted"),
    [(True, True, True), (True, False, False), (False, True, False), ("ask", True, False)],
)
def test_rename_needs_both_deletions_and_new_files(
    repo: Path, deletions: bool | str, new_files: bool, lifted: bool
) -> None:
    git(repo, "mv", "src/util.py", "src/helpers.py")
    verdict = guard(
        repo,
        batch=("src/util.py",),
        scope=(*SCOPE, "src/helpers.py"),
        allow_deletions=deletions,
        allow_new_files=new_files,
    )
    assert verdict.ok is lifted, verdict.describe()
    assert (("src/helpers.py", Rule.RENAME) in found(verdict)) is not lifted


def test_rename_with_spaces_takes_names_from_the_rename_lines(repo_factory: RepoFactory) -> None:
    # `diff --git a/x b b/y b/x b` is ambiguous; unidiff itself misreads the target here.
    repo = repo_factory({"old dir/x b.py": "a = 1\nb = 2\nc = 3\n"})
    (repo / "new b").mkdir()
    git(repo, "mv", "old dir/x b.py", "new b/x b.py")
    verdict = guard(repo, batch=("old dir/x b.py",), scope=("new b/x b.py",), **ALL_FLAGS)
    assert verdict.ok, verdict.describe()
    assert verdict.changed_files == ("new b/x b.py",)
    refused = guard(repo, batch=("old dir/x b.py",), scope=())
    assert found(refused) == {
        ("new b/x b.py", Rule.RENAME),
        ("new b/x b.py", Rule.OUTSIDE_BATCH),
    }


def test_renaming_a_file_out_of_the_batch_flags_the_source(repo: Path) -> None:
    git(repo, "mv", "docs/readme.md", "src/readme.md")
    verdict = guard(repo, batch=("src/app.py",), scope=(*SCOPE, "src/readme.md"), **ALL_FLAGS)
    assert found(verdict) == {("docs/readme.md", Rule.OUTSIDE_BATCH)}


# --- new files ------------------------------------------------------------------------


def test_new_file_is_refused_by_default(repo: Path) -> None:
    write_files(repo, {"src/new.py": "N = 1\n"})
    verdict = guard(repo, batch=("src/app.py",), scope=(*SCOPE, "src/new.py"))
    violation = assert_refused(verdict, "src/new.py", Rule.NEW_FILE)
    assert "allow_new_files: true" in violation.detail
    assert found(verdict) == {("src/new.py", Rule.NEW_FILE)}
    assert verdict.added_files == ("src/new.py",)


def test_new_file_in_scope_is_lifted_by_allow_new_files(repo: Path) -> None:
    write_files(repo, {"src/new.py": "N = 1\n"})
    verdict = guard(repo, batch=("src/app.py",), scope=(*SCOPE, "src/new.py"), allow_new_files=True)
    assert verdict.ok, verdict.describe()
    assert verdict.added_files == ("src/new.py",)
    assert verdict.lines_added == 1


def test_new_file_outside_scope_is_outside_batch_even_when_allowed(repo: Path) -> None:
    write_files(repo, {"docs/new.md": "new\n"})
    verdict = guard(repo, batch=("src/app.py",), allow_new_files=True)
    assert found(verdict) == {("docs/new.md", Rule.OUTSIDE_BATCH)}
    refused = guard(repo, batch=("src/app.py",))
    assert found(refused) == {("docs/new.md", Rule.OUTSIDE_BATCH), ("docs/new.md", Rule.NEW_FILE)}


def test_empty_new_file_without_hunks_is_still_a_new_file(repo: Path) -> None:
    write_files(repo, {"src/empty.py": ""})
    verdict = guard(repo, batch=("src/app.py",), scope=(*SCOPE, "src/empty.py"))
    assert found(verdict) == {("src/empty.py", Rule.NEW_FILE)}
    assert verdict.changed_files == ("src/empty.py",)
