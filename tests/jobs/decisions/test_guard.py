"""The diff guard on edits inside the batch, driven by real `git diff --cached -M HEAD` output:
clean edits and their counts, batch and scope, several violations and which gate wins, the
policy's defaults (files added, deleted and renamed: test_guard_files.py; paths and kinds of
file: test_guard_paths.py; reading the diff: test_guard_diff.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.decisions.guard import GuardPolicy, Rule, check_diff
from tests.conftest import RepoFactory
from tests.jobs.decisions.guard_kit import BASE, assert_refused, found, guard
from tests.kit.repos import commit_all, write_files


@pytest.fixture
def repo(repo_factory: RepoFactory) -> Path:
    return repo_factory(BASE)


# --- clean edits, counts and the empty diff ---------------------------------------------


def test_clean_in_batch_edit_is_ok(repo: Path) -> None:
    write_files(repo, {"src/app.py": "def main():\n    return 2\n"})
    verdict = guard(repo, batch=("src/app.py",))
    assert verdict.ok, verdict.describe()
    assert verdict.violations == () and verdict.gate is None
    assert verdict.changed_files == ("src/app.py",)
    assert (verdict.lines_added, verdict.lines_removed) == (1, 1)
    assert verdict.deleted_files == () and verdict.added_files == ()
    assert verdict.describe().startswith("ok: 1 file(s) changed")


def test_empty_diff_is_ok(repo: Path) -> None:
    verdict = guard(repo, batch=("src/app.py",))
    assert verdict.ok
    assert verdict.changed_files == ()
    assert (verdict.lines_added, verdict.lines_removed) == (0, 0)
    assert check_diff("", batch_files=(), scope_files=(), policy=GuardPolicy()).ok


def test_missing_final_newline_and_blank_context_lines_count_right(repo: Path) -> None:
    write_files(repo, {"src/util.py": "A = 1\n\nB = 2"})
    commit_all(repo, "no final newline")
    write_files(repo, {"src/util.py": "A = 3\n\nB = 4\n"})
    verdict = guard(repo, batch=("src/util.py",))
    assert verdict.ok, verdict.describe()
    assert (verdict.lines_added, verdict.lines_removed) == (2, 2)


def test_crlf_and_lone_cr_content_is_counted_by_lines(repo_factory: RepoFactory) -> None:
    repo = repo_factory({"src/dos.py": b"a = 1\r\nb = 2\r\n", "src/mac.py": b"a\rb\n"})
    write_files(repo, {"src/dos.py": b"a = 1\r\nb = 3\r\n", "src/mac.py": b"a\rc\n"})
    verdict = guard(repo, batch=("src/dos.py", "src/mac.py"))
    assert verdict.ok, verdict.describe()
    assert (verdict.lines_added, verdict.lines_removed) == (2, 2)


def test_several_files_are_sorted_and_counted(repo: Path) -> None:
    write_files(repo, {"src/util.py": "X = 2\nZ = 3\n", "src/app.py": "x = 1\n"})
    verdict = guard(repo, batch=("src/app.py", "src/util.py"))
    assert verdict.ok
    assert verdict.changed_files == ("src/app.py", "src/util.py")
    assert (verdict.lines_added, verdict.lines_removed) == (3, 3)


# --- batch and scope --------------------------------------------------------------------


def test_edit_outside_batch_and_scope_is_refused(repo: Path) -> None:
    write_files(repo, {"docs/readme.md": "changed\n", "src/app.py": "x = 1\n"})
    verdict = guard(repo, batch=("src/app.py",))
    violation = assert_refused(verdict, "docs/readme.md", Rule.OUTSIDE_BATCH)
    assert "outside" in violation.detail or "neither" in violation.detail
    assert verdict.gate is None
    assert found(verdict) == {("docs/readme.md", Rule.OUTSIDE_BATCH)}


def test_edit_in_scope_but_outside_batch_opens_scope_gate(repo: Path) -> None:
    write_files(repo, {"src/app.py": "x = 1\n", "src/util.py": "X = 2\n"})
    verdict = guard(repo, batch=("src/app.py",))
    assert verdict.gate == "scope"
    assert not verdict.ok
    assert_refused(verdict, "src/util.py", Rule.OUTSIDE_BATCH_IN_SCOPE)
    assert found(verdict) == {("src/util.py", Rule.OUTSIDE_BATCH_IN_SCOPE)}
    assert verdict.describe().splitlines()[0].startswith("the edit touched files inside")


def test_scope_gate_gives_way_to_a_real_violation(repo: Path) -> None:
    write_files(repo, {"src/util.py": "X = 2\n", "docs/readme.md": "changed\n"})
    verdict = guard(repo, batch=("src/app.py",))
    assert verdict.gate is None
    assert found(verdict) == {
        ("src/util.py", Rule.OUTSIDE_BATCH_IN_SCOPE),
        ("docs/readme.md", Rule.OUTSIDE_BATCH),
    }


# --- several violations, gates and their order ------------------------------------------


def test_one_file_with_several_violations_lists_each(repo: Path) -> None:
    write_files(repo, {"tests/test_new.py": "def test_x():\n    pass\n"})
    (repo / "tests/test_new.py").chmod(0o755)
    verdict = guard(repo, batch=("src/app.py",))
    expected = {Rule.OUTSIDE_BATCH, Rule.NEW_FILE, Rule.TEST_EDIT, Rule.MODE_CHANGE}
    assert found(verdict) == {("tests/test_new.py", rule) for rule in expected}
    described = verdict.describe().splitlines()
    assert len(described) == 4
    assert all(line.startswith("- tests/test_new.py: ") for line in described)
    assert [v.rule for v in verdict.violations] == sorted(expected, key=list(Rule).index)


def test_large_change_boundary(repo: Path) -> None:
    write_files(repo, {"src/util.py": "X = 1\n" + "".join(f"L{i} = {i}\n" for i in range(10))})
    at_limit = guard(repo, batch=("src/util.py",), max_batch_lines=10)
    assert at_limit.ok, at_limit.describe()
    assert (at_limit.lines_added, at_limit.lines_removed) == (10, 0)
    over = guard(repo, batch=("src/util.py",), max_batch_lines=9)
    assert over.gate == "large_change"
    assert over.violations == ()
    assert not over.ok
    assert "10 lines" in over.describe()


def test_large_change_is_not_a_gate_when_refused(repo: Path) -> None:
    write_files(repo, {"docs/readme.md": "a\nb\nc\n"})
    verdict = guard(repo, batch=(), max_batch_lines=1)
    assert verdict.gate is None
    assert found(verdict) == {("docs/readme.md", Rule.OUTSIDE_BATCH)}


def test_deletion_gate_wins_over_large_change(repo: Path) -> None:
    (repo / "src/app.py").unlink()
    verdict = guard(repo, batch=("src/app.py",), allow_deletions="ask", max_batch_lines=1)
    assert verdict.gate == "deletion"


def test_scope_gate_wins_over_deletion_and_large_change(repo: Path) -> None:
    (repo / "src/app.py").unlink()
    write_files(repo, {"src/util.py": "X = 2\n"})
    verdict = guard(repo, batch=("src/app.py",), allow_deletions="ask", max_batch_lines=1)
    assert verdict.gate == "scope"
    assert found(verdict) == {("src/util.py", Rule.OUTSIDE_BATCH_IN_SCOPE)}


def test_policy_defaults_match_the_documented_config() -> None:
    policy = GuardPolicy()
    assert policy.allow_deletions is False
    assert not (policy.allow_new_files or policy.allow_test_edits or policy.allow_manifest_edits)
    assert policy.protected_paths == (".github/**", ".env*", "**/*.pem", "**/secrets/**")
    assert policy.max_batch_lines == 400
    assert {rule.value for rule in Rule} >= {"outside_batch", "ci_config", "submodule"}
