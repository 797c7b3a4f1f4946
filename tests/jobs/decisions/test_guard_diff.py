"""Reading the staged diff (jobs/decisions/guard_diff.py): file names as git writes them
(non-ASCII, spaces, C-quoted) and input that is no diff at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.decisions.guard import DiffParseError, GuardPolicy, Rule, check_diff
from tests.conftest import RepoFactory
from tests.jobs.decisions.guard_kit import BASE, SCOPE, found, guard, staged_diff
from tests.kit.repos import write_files


@pytest.fixture
def repo(repo_factory: RepoFactory) -> Path:
    return repo_factory(BASE)


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
    # read back exactly (C-quoted by git), and refused twice: new, and a tab in its name
    assert found(verdict) == {(name, Rule.NEW_FILE), (name, Rule.NEW_NAME)}


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
