"""The order pytest-xdist hands files to its workers in (tests/conftest.py, scripts/test): the
files holding a slow test first, then the others, the files of most tests first in each part,
and every file's tests together and in their own order (module fixtures such as the chaos
cluster rely on it)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import slow_files_first


@dataclass
class Item:
    nodeid: str
    slow: bool = False

    def get_closest_marker(self, name: str) -> object:
        return pytest.mark.slow if name == "slow" and self.slow else None


def test_files_with_a_slow_test_come_first_and_each_file_stays_whole_and_in_order() -> None:
    items = [Item("tests/a.py::one"), Item("tests/a.py::two"), Item("tests/a.py::three"),
             Item("tests/drill.py::ci", slow=True),
             Item("tests/b.py::one"), Item("tests/b.py::two", slow=True),
             Item("tests/c.py::one"), Item("tests/c.py::two")]
    ordered = slow_files_first(items)
    assert [t.nodeid for t in ordered] == [
        "tests/b.py::one", "tests/b.py::two", "tests/drill.py::ci",
        "tests/a.py::one", "tests/a.py::two", "tests/a.py::three",
        "tests/c.py::one", "tests/c.py::two"]
