"""The diff guard on where an edit lands and what kind of file it is: tests, manifests,
protected paths, CI config, binaries, symlinks, modes, submodules, unsafe paths, and the
classification tables behind them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from jobs.decisions.guard import GuardPolicy, Rule, check_diff, is_manifest_path, is_test_path
from tests.conftest import RepoFactory
from tests.jobs.decisions.guard_kit import ALL_FLAGS, BASE, assert_refused, found, guard, staged_diff
from tests.kit.repos import git, write_files


@pytest.fixture
def repo(repo_factory: RepoFactory) -> Path:
    return repo_factory(BASE)


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
