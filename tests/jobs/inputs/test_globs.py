"""Glob matching (.gitignore-like semantics) and the safe-path check for globs and paths."""

from __future__ import annotations

import pytest

from jobs.inputs.globs import glob_match, matches_any, unsafe_path_reason


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # `*` stays inside one path segment
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/*.py", "lib/a.py", False),
        ("src/*", "src/.hidden", True),
        ("src/*", "src", False),
        # `**/` matches zero or more directories, `/**` everything inside
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/z/a.py", True),
        ("src/**/*.py", "srcx/a.py", False),
        ("src/**/*.py", "src/a.txt", False),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "deep/er/test_a.py", True),
        ("src/**", "src/a.py", True),
        ("src/**", "src/a/b/c.txt", True),
        ("src/**", "src", False),
        ("src/**", "srcfoo/a.py", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/xb", False),
        ("**", "any/depth/file", True),
        # `?` is one character, never a slash
        ("src/?.py", "src/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("src/a?b.py", "src/a/b.py", False),
        # `[...]` classes, `!` negates
        ("src/[ab].py", "src/a.py", True),
        ("src/[ab].py", "src/c.py", False),
        ("src/[a-c].py", "src/b.py", True),
        ("src/[!a].py", "src/a.py", False),
        ("src/[!a].py", "src/b.py", True),
        ("src/[.py", "src/[.py", True),  # an unclosed bracket is a literal
        # other regex metacharacters are literal
        ("src/a+b.py", "src/a+b.py", True),
        ("src/a+b.py", "src/aab.py", False),
        ("src/a.py", "src/aXpy", False),
        ("src/(x)|y.py", "src/(x)|y.py", True),
        # no slash in the pattern: the file name at any depth (.gitignore)
        ("*.py", "a.py", True),
        ("*.py", "x/y/a.py", True),
        ("*.py", "x/y/a.pyc", False),
        ("setup.cfg", "setup.cfg", True),
        ("setup.cfg", "pkg/setup.cfg", True),
        ("setup.cfg", "pkg/xsetup.cfg", False),
        (".env*", ".env.local", True),
        (".env*", "deploy/.env", True),
        # a slash anywhere (but the end) anchors at the root; a leading slash too
        ("src/a.py", "src/a.py", True),
        ("src/a.py", "lib/src/a.py", False),
        ("/a.py", "a.py", True),
        ("/a.py", "x/a.py", False),
        # the whole path must match
        ("src/a", "src/a.py", False),
        ("a.py", "a.py.bak", False),
        # trailing slash: a directory; everything inside it matches, the name alone does not
        ("build/", "build/out.o", True),
        ("build/", "pkg/build/deep/out.o", True),
        ("build/", "build", False),
        ("build/", "builder/x", False),
        ("src/gen/", "src/gen/a.py", True),
        ("src/gen/", "x/src/gen/a.py", False),
        ("**/secrets/**", "a/secrets/key.txt", True),
        ("**/secrets/**", "secrets/key.txt", True),
        ("**/*.pem", "cert.pem", True),
        ("**/*.pem", "a/b/cert.pem", True),
        # non-ASCII and spaces are ordinary characters
        ("docs/*.md", "docs/café notes.md", True),
    ],
)
def test_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(path, pattern) is expected


def test_bracket_class_never_matches_a_slash() -> None:
    assert glob_match("src/a/b.py", "src/a[!x]b.py") is False


def test_double_star_inside_a_segment_acts_like_one_star() -> None:
    assert glob_match("src/ab.py", "src/a**.py") is True
    assert glob_match("src/a/b.py", "src/a**.py") is False


def test_matches_any() -> None:
    assert matches_any("src/a.py", ["docs/**", "*.py"])
    assert not matches_any("src/a.py", ["docs/**", "*.txt"])
    assert not matches_any("src/a.py", [])


@pytest.mark.parametrize(
    "path",
    ["src/**/*.py", "a.py", "./src/a.py", ".github/workflows/*.yml", ".gitignore", "a..b/c.py",
     "dir/.git-keep", "café/*.md"],
)
def test_safe_paths(path: str) -> None:
    assert unsafe_path_reason(path) is None


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("/etc/passwd", "absolute"),
        ("/src/**", "absolute"),
        ("C:/x", "absolute"),
        ("c:foo", "absolute"),
        ("../x", "`..`"),
        ("src/../../x", "`..`"),
        ("src/..", "`..`"),
        (".git/config", ".git/"),
        (".git", ".git/"),
        ("./.git/hooks/pre-commit", ".git/"),
        ("src\\a.py", "backslash"),
        ("src/a\x00.py", "NUL"),
    ],
)
def test_unsafe_paths(path: str, words: str) -> None:
    reason = unsafe_path_reason(path)
    assert reason is not None
    assert words in reason
