"""The diff guard, driven by real `git diff --cached -M HEAD` output from temporary repos."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jobs.domain.guard import (
    DiffParseError,
    GuardPolicy,
    GuardVerdict,
    Rule,
    Violation,
    check_diff,
    is_manifest_path,
    is_test_path,
)
from tests.conftest import RepoFactory
from tests.kit.repos import GIT_ENV, commit_all, git, write_files

BASE: dict[str, str | bytes] = {
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "X = 1\n",
    "src/other.py": "Y = 2\n",
    "docs/readme.md": "hello\n",
    "tests/test_app.py": "def test_main():\n    assert True\n",
    "pyproject.toml": "[project]\nname = 'x'\n",
    ".github/workflows/ci.yml": "on: push\n",
    ".github/stepwise.yml": "validate: []\n",
    "run.sh": "echo hi\n",
}
SCOPE = ("src/app.py", "src/util.py", "src/other.py")
ALL_FLAGS: dict[str, Any] = {
    "allow_deletions": True,
    "allow_new_files": True,
    "allow_test_edits": True,
    "allow_manifest_edits": True,
}


def staged_diff(repo: Path) -> str:
    """Exactly the engine's command. Not `support.git`: its strip() would cut a trailing
    context line and make the last hunk short."""
    git(repo, "add", "-A")
    done = subprocess.run(
        [
            "git",
            "-c",
            "core.quotepath=false",
            "diff",
            "--cached",
            "-M",
            "--no-color",
            "--no-ext-diff",
            "HEAD",
        ],
        cwd=repo,
        env={**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull},
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", errors="surrogateescape")


def guard(
    repo: Path, *, batch: tuple[str, ...] = (), scope: tuple[str, ...] = SCOPE, **policy: Any
) -> GuardVerdict:
    return check_diff(
        staged_diff(repo), batch_files=batch, scope_files=scope, policy=GuardPolicy(**policy)
    )


def found(verdict: GuardVerdict) -> set[tuple[str, Rule]]:
    return {(v.path, v.rule) for v in verdict.violations}


def assert_refused(verdict: GuardVerdict, path: str, rule: Rule) -> Violation:
    """The verdict refuses, and its report names the path and the rule."""
    assert not verdict.ok
    assert (path, rule) in found(verdict), verdict.describe()
    assert f"- {path}: {rule.value} — " in verdict.describe()
    return next(v for v in verdict.violations if (v.path, v.rule) == (path, rule))


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


# --- tests, manifests, protected paths, CI ------------------------------------------------


def test_test_edit_is_refused_and_lifted(repo: Path) -> None:
    write_files(repo, {"tests/test_app.py": "def test_main():\n    assert 1\n"})
    batch = ("tests/test_app.py",)
    violation = assert_refused(guard(repo, batch=batch), "tests/test_app.py", Rule.TEST_EDIT)
    assert "allow_test_edits: true" in violation.detail
    assert guard(repo, batch=batch, allow_test_edits=True).ok


def test_manifest_edit_is_refused_and_lifted(repo: Path) -> None:
    write_files(repo, {"pyproject.toml": "[project]\nname = 'y'\n"})
    batch = ("pyproject.toml",)
    violation = assert_refused(guard(repo, batch=batch), "pyproject.toml", Rule.MANIFEST_EDIT)
    assert "allow_manifest_edits: true" in violation.detail
    assert guard(repo, batch=batch, allow_manifest_edits=True).ok


def test_protected_path_is_refused_whatever_the_flags(repo: Path) -> None:
    write_files(repo, {".github/stepwise.yml": "validate: [pytest]\n"})
    batch = (".github/stepwise.yml",)
    verdict = guard(repo, batch=batch, **ALL_FLAGS)
    violation = assert_refused(verdict, ".github/stepwise.yml", Rule.PROTECTED_PATH)
    assert "protected_paths" in violation.detail
    assert found(verdict) == {(".github/stepwise.yml", Rule.PROTECTED_PATH)}
    # Only taking the pattern out of protected_paths lifts it.
    assert guard(repo, batch=batch, protected_paths=()).ok


@pytest.mark.parametrize(
    ("path", "patterns"),
    [
        (".env.local", None),
        ("src/keys/server.pem", None),
        ("src/secrets/token.txt", None),
        ("src/app.py", ("src/app.py",)),
    ],
)
def test_protected_path_patterns(repo: Path, path: str, patterns: tuple[str, ...] | None) -> None:
    write_files(repo, {path: "changed\n"})
    policy: dict[str, Any] = {} if patterns is None else {"protected_paths": patterns}
    verdict = guard(repo, batch=(path,), scope=(path,), **ALL_FLAGS, **policy)
    assert found(verdict) == {(path, Rule.PROTECTED_PATH)}


def test_ci_config_is_refused_even_with_everything_allowed(repo: Path) -> None:
    write_files(repo, {".github/workflows/ci.yml": "on: [push, pull_request]\n"})
    batch = (".github/workflows/ci.yml",)
    verdict = guard(repo, batch=batch, protected_paths=(), **ALL_FLAGS)
    violation = assert_refused(verdict, ".github/workflows/ci.yml", Rule.CI_CONFIG)
    assert "no setting" in violation.detail
    assert found(verdict) == {(".github/workflows/ci.yml", Rule.CI_CONFIG)}
    assert found(guard(repo, batch=batch)) == {
        (".github/workflows/ci.yml", Rule.CI_CONFIG),
        (".github/workflows/ci.yml", Rule.PROTECTED_PATH),
    }


@pytest.mark.parametrize(
    "path", [".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile", "azure-pipelines.yml"]
)
def test_other_ci_systems_are_ci_config(repo: Path, path: str) -> None:
    write_files(repo, {path: "steps: []\n"})
    verdict = guard(repo, batch=(path,), scope=(path,), protected_paths=(), **ALL_FLAGS)
    assert found(verdict) == {(path, Rule.CI_CONFIG)}


# --- binary, symlink, mode, submodule, unsafe path ----------------------------------------


def test_binary_file_is_refused(repo: Path) -> None:
    write_files(repo, {"src/data.bin": b"\x00\x01\x02binary\x00"})
    verdict = guard(repo, batch=("src/data.bin",), **ALL_FLAGS)
    violation = assert_refused(verdict, "src/data.bin", Rule.BINARY)
    assert "binary" in violation.detail
    assert found(verdict) == {("src/data.bin", Rule.BINARY)}
    assert (verdict.lines_added, verdict.lines_removed) == (0, 0)


def test_binary_modification_is_refused(repo_factory: RepoFactory) -> None:
    repo = repo_factory({"img.bin": b"\x00old"})
    write_files(repo, {"img.bin": b"\x00new"})
    verdict = guard(repo, batch=("img.bin",), **ALL_FLAGS)
    assert found(verdict) == {("img.bin", Rule.BINARY)}


def test_symlink_added_is_refused(repo: Path) -> None:
    os.symlink("app.py", repo / "src/link.py")
    verdict = guard(repo, batch=("src/link.py",), **ALL_FLAGS)
    violation = assert_refused(verdict, "src/link.py", Rule.SYMLINK)
    assert "symbolic link" in violation.detail
    assert found(verdict) == {("src/link.py", Rule.SYMLINK)}


def test_file_replaced_by_symlink_is_refused(repo: Path) -> None:
    (repo / "src/util.py").unlink()
    os.symlink("app.py", repo / "src/util.py")
    verdict = guard(repo, batch=("src/util.py",), **ALL_FLAGS)
    assert found(verdict) == {("src/util.py", Rule.SYMLINK)}


def test_chmod_plus_x_is_a_mode_change(repo: Path) -> None:
    (repo / "run.sh").chmod(0o755)
    verdict = guard(repo, batch=("run.sh",), **ALL_FLAGS)
    violation = assert_refused(verdict, "run.sh", Rule.MODE_CHANGE)
    assert "100644 to 100755" in violation.detail
    assert found(verdict) == {("run.sh", Rule.MODE_CHANGE)}
    assert (verdict.lines_added, verdict.lines_removed) == (0, 0)


def test_new_executable_file_is_a_mode_change(repo: Path) -> None:
    write_files(repo, {"src/tool.py": "print(1)\n"})
    (repo / "src/tool.py").chmod(0o755)
    verdict = guard(repo, batch=("src/tool.py",), **ALL_FLAGS)
    violation = assert_refused(verdict, "src/tool.py", Rule.MODE_CHANGE)
    assert "executable" in violation.detail


def test_submodule_is_refused(repo: Path) -> None:
    inner = repo / "vendor/lib"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    git(inner, "commit", "-q", "--allow-empty", "-m", "inner")
    verdict = guard(repo, batch=("vendor/lib",), **ALL_FLAGS)
    violation = assert_refused(verdict, "vendor/lib", Rule.SUBMODULE)
    assert "submodule" in violation.detail
    assert found(verdict) == {("vendor/lib", Rule.SUBMODULE)}


@pytest.mark.parametrize("bad", ["../escape.py", ".git/hooks/pre-commit", "src/back\\slash.py"])
def test_unsafe_paths_are_refused(repo: Path, bad: str) -> None:
    # git cannot stage these; rewrite a real diff's names as a hostile producer might.
    write_files(repo, {"src/app.py": "x = 1\n"})

    def printed(prefix: str) -> str:  # git C-quotes names holding a backslash
        name = prefix + bad
        return '"' + name.replace("\\", "\\\\") + '"' if "\\" in bad else name

    diff = staged_diff(repo).replace("a/src/app.py", printed("a/"))
    diff = diff.replace("b/src/app.py", printed("b/"))
    verdict = check_diff(diff, batch_files=(bad,), scope_files=(bad,), policy=GuardPolicy())
    violation = assert_refused(verdict, bad, Rule.UNSAFE_PATH)
    assert "unsafe path" in violation.detail


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


# --- file names ------------------------------------------------------------------------


def test_non_ascii_names_are_read_verbatim(repo_factory: RepoFactory) -> None:
    name = "src/données/é_ü.py"
    repo = repo_factory({name: "a = 1\n", "docs/façade.md": "x\n"})
    write_files(repo, {name: "a = 2\n", "docs/façade.md": "y\n"})
    diff = staged_diff(repo)
    assert f"diff --git a/{name} b/{name}" in diff  # quotepath=false: not octal-escaped
    verdict = check_diff(diff, batch_files=(name,), scope_files=(name,), policy=GuardPolicy())
    assert verdict.changed_files == ("docs/façade.md", name)
    assert found(verdict) == {("docs/façade.md", Rule.OUTSIDE_BATCH)}


@pytest.mark.parametrize("name", ["src/my file.py", 'src/quo"te.py', "src/tab\there.py"])
def test_spaces_and_c_quoted_names(repo_factory: RepoFactory, name: str) -> None:
    repo = repo_factory({name: "a = 1\n"})
    write_files(repo, {name: "a = 2\n"})
    verdict = guard(repo, batch=(name,), scope=(name,))
    assert verdict.ok, verdict.describe()
    assert verdict.changed_files == (name,)


def test_c_quoted_new_file_name(repo: Path) -> None:
    name = 'src/new "quoted"\tfile.py'
    write_files(repo, {name: "n = 1\n"})
    verdict = guard(repo, batch=("src/app.py",), scope=(*SCOPE, name))
    assert found(verdict) == {(name, Rule.NEW_FILE)}


# --- unparseable input ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "this is not a diff\n",
        "Sure! Here is the change you asked for.\n",
        "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n",  # no `diff --git` header
        # a hunk shorter than its header says
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n-a\n",
        "diff --git x.py x.py\nindex 1..2 100644\n",  # no a/ b/ prefixes
    ],
)
def test_garbage_raises_diff_parse_error(text: str) -> None:
    with pytest.raises(DiffParseError) as caught:
        check_diff(text, batch_files=(), scope_files=(), policy=GuardPolicy())
    assert caught.value.code == "unparseable_diff"
    assert caught.value.message


def test_truncated_real_diff_raises(repo: Path) -> None:
    write_files(repo, {"src/app.py": "def main():\n    return 2\n    # more\n"})
    diff = staged_diff(repo)
    truncated = diff[: diff.rindex("+    # more")]
    with pytest.raises(DiffParseError, match="shorter"):
        check_diff(truncated, batch_files=(), scope_files=(), policy=GuardPolicy())


def test_trailing_prose_after_a_real_diff_raises(repo: Path) -> None:
    write_files(repo, {"src/app.py": "x = 1\n"})
    text = staged_diff(repo) + "I hope this helps!\n"
    with pytest.raises(DiffParseError, match="not part of a git diff"):
        check_diff(text, batch_files=("src/app.py",), scope_files=(), policy=GuardPolicy())


# --- classification tables --------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_app.py", True),
        ("tests/helpers.py", True),
        ("pkg/test/data.json", True),
        ("web/__tests__/App.js", True),
        ("spec/models/user_spec.rb", True),
        ("testing/utils.py", True),
        ("Tests/FooTests.swift", True),
        ("test_app.py", True),
        ("src/app_test.py", True),
        ("src/conftest.py", True),
        ("app/tests.py", True),
        ("pkg/server_test.go", True),
        ("web/App.test.tsx", True),
        ("web/App.test.mjs", True),
        ("web/App.spec.ts", True),
        ("src/main/java/FooTest.java", True),
        ("lib/user_spec.rb", True),
        ("contest.py", False),
        ("latest/x.py", False),
        ("src/testing_utils.py", False),
        ("src/test_data.json", False),
        ("src/attest.py", False),
        ("src/testimony/x.py", False),
        ("src/specification.md", False),
        ("src/Tester.java", False),
        ("web/App.spec.mjs", False),
        ("src/app.py", False),
    ],
)
def test_is_test_path(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pyproject.toml", True),
        ("sub/pkg/pyproject.toml", True),
        ("setup.py", True),
        ("setup.cfg", True),
        ("requirements.txt", True),
        ("requirements-dev.txt", True),
        ("requirements/base.txt", True),
        ("svc/requirements/prod.txt", True),
        ("constraints.txt", True),
        ("Pipfile", True),
        ("Pipfile.lock", True),
        ("poetry.lock", True),
        ("uv.lock", True),
        ("pdm.lock", True),
        ("web/package.json", True),
        ("package-lock.json", True),
        ("npm-shrinkwrap.json", True),
        ("yarn.lock", True),
        ("pnpm-lock.yaml", True),
        ("bun.lockb", True),
        ("Cargo.toml", True),
        ("crates/x/Cargo.lock", True),
        ("go.mod", True),
        ("go.sum", True),
        ("Gemfile", True),
        ("Gemfile.lock", True),
        ("mygem.gemspec", True),
        ("composer.json", True),
        ("composer.lock", True),
        ("pom.xml", True),
        ("build.gradle", True),
        ("app/build.gradle.kts", True),
        ("gradle.lockfile", True),
        ("environment.yml", True),
        ("conda-lock.yml", True),
        ("docs/requirements.md", False),
        ("requirements/nested/x.txt", False),
        ("pyproject.toml.bak", False),
        ("my-package.json", False),
        ("package.json5", False),
        ("src/setup_helpers.py", False),
        ("gomod.go", False),
        ("src/app.py", False),
    ],
)
def test_is_manifest_path(path: str, expected: bool) -> None:
    assert is_manifest_path(path) is expected


def test_policy_defaults_match_the_documented_config() -> None:
    policy = GuardPolicy()
    assert policy.allow_deletions is False
    assert not (policy.allow_new_files or policy.allow_test_edits or policy.allow_manifest_edits)
    assert policy.protected_paths == (".github/**", ".env*", "**/*.pem", "**/secrets/**")
    assert policy.max_batch_lines == 400
    assert {rule.value for rule in Rule} >= {"outside_batch", "ci_config", "submodule"}
