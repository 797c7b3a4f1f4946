"""What every fuzz target shares (tests/kit/fuzzing.py lists the targets): the failure type,
the app slug, the hostile paths tried everywhere, and arbitrary JSON values."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SLUG = "stepwise"
NASTY_PATHS = ("../etc/passwd", "/etc/shadow", ".git/config", ".git/hooks/pre-commit",
               "src/../../x", "C:/Windows", "a\\b", "a\x00b", "", " ", "**", "src/**/*.py",
               ".github/workflows/ci.yml", "tests/test_x.py", "pyproject.toml", "ünï/cödé.py",
               "with space.py", 'quote"d.py', "tab\there.py", "new\nline.py", "-rf", "~/.ssh/id")


class Unexpected(AssertionError):
    """An outcome the contract does not allow (the fuzz failure)."""


def json_values(*, nan: bool = True) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**80),
        st.floats(allow_nan=nan, allow_infinity=nan), st.text(max_size=40),
        st.sampled_from(["", "0", "-1", "stepwise", "/stepwise approve", "a/b", "refs/heads/x"]),
    )
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
        max_leaves=12)
