"""Before Python 3.12 the batch's changed files are measured by compiling them with a record of
each statement (jobs/features/evidence/line_probe.py): what they do is unchanged, docstrings and
`__future__` imports stay first, and the lines recorded are those coverage.py would report."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.features.evidence import line_probe

MODULE = '''"""A module docstring."""

from __future__ import annotations


def decorate(function):
    return function


class Shape:
    """A class docstring."""

    sides: int = 4

    @decorate
    def area(self, size: int) -> int:
        """A method docstring."""
        if size < 0:
            raise ValueError("negative")
        elif size == 0:
            return 0
        else:
            total = (size *
                     size)
        try:
            return total
        finally:
            pass


def never_called():
    return 1
'''


@pytest.fixture
def probed(tmp_path: Path) -> Iterator[tuple[object, dict[str, set[int]], str]]:
    path = tmp_path / "probed_shapes.py"
    path.write_text(MODULE)
    hits: dict[str, set[int]] = {}
    before = list(sys.meta_path)
    sys.path.insert(0, str(tmp_path))
    line_probe.install({str(path.resolve())}, hits)
    try:
        yield importlib.import_module("probed_shapes"), hits, str(path.resolve())
    finally:
        sys.meta_path[:] = before
        sys.path.remove(str(tmp_path))
        sys.modules.pop("probed_shapes", None)


def test_the_module_behaves_the_same_and_its_lines_run_are_recorded(
        probed: tuple[object, dict[str, set[int]], str]) -> None:
    module, hits, path = probed
    assert module.__doc__ == "A module docstring."
    assert module.Shape.__doc__ == "A class docstring."  # type: ignore[attr-defined]
    assert module.Shape.area.__doc__ == "A method docstring."  # type: ignore[attr-defined]
    assert module.Shape().area(3) == 9  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="negative"):
        module.Shape().area(-1)  # type: ignore[attr-defined]
    ran = hits[path]
    # coverage.py's statements that ran: the future import, the defs and the decorator, the
    # class body, the if chain, the statement over two lines (by its first), try and finally
    assert {3, 6, 7, 10, 13, 15, 16, 18, 19, 20, 23, 25, 26, 28, 31} <= ran
    assert 21 not in ran and 32 not in ran  # `return 0` never ran; never_called's body
    assert 24 not in ran  # the second line of a statement over two lines is its first's


def test_files_not_named_are_left_to_the_usual_finders(tmp_path: Path) -> None:
    other = tmp_path / "probed_other.py"
    other.write_text("VALUE = 1\n")
    before = list(sys.meta_path)
    sys.path.insert(0, str(tmp_path))
    hits: dict[str, set[int]] = {}
    line_probe.install({str((tmp_path / "elsewhere.py").resolve())}, hits)
    try:
        module = importlib.import_module("probed_other")
        assert module.VALUE == 1 and hits == {}
        assert type(module.__loader__).__name__ == "SourceFileLoader"
    finally:
        sys.meta_path[:] = before
        sys.path.remove(str(tmp_path))
        sys.modules.pop("probed_other", None)
