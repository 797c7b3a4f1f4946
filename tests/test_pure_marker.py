"""The `pure` marker (`make test-pure`) is read from what a test file imports, against the pure
rooms of pyproject.toml's import contract: never a hand-kept list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.pure_tests import is_pure_source, is_pure_test, pure_contract


def test_the_rooms_are_the_import_contracts() -> None:
    rooms, io_libraries = pure_contract()
    assert {"jobs.kernel", "jobs.inputs", "jobs.decisions", "jobs.notes"} <= set(rooms)
    assert "subprocess" in io_libraries and "redis" in io_libraries


@pytest.mark.parametrize(("source", "pure"), [
    ("from jobs.inputs.spec import TaskSpec", True),
    ("from jobs.inputs import spec\nimport jobs.kernel.model", True),
    ("from jobs.inputs.spec import TaskSpec\nimport subprocess", False),
    ("from jobs.engine.engine import Engine", False),
    ("from bot.commands import COMMANDS", False),
    ("from jobs.kernel.model import JobStatus\ndef f():\n    from jobs.adapters import store", False),
    ("from tests.kit.repos import make_repo", False),  # git repositories on disk
    ("import json", False),  # tests nothing of the project's
])
def test_a_file_is_pure_by_its_imports(source: str, pure: bool) -> None:
    assert is_pure_source(source) is pure


def test_a_fixture_beyond_pytests_own_makes_a_test_impure() -> None:
    here = Path(__file__).parent / "jobs" / "kernel" / "test_model.py"
    assert is_pure_test(here, ("tmp_path", "monkeypatch"))
    assert not is_pure_test(here, ("tmp_path", "repo_factory"))
    assert not is_pure_test(here, ("redis_url",))


def test_make_test_pure_selects_by_the_marker() -> None:
    makefile = (Path(__file__).parent.parent / "Makefile").read_text()
    target = makefile[makefile.index("test-pure:"):].split("\n\n")[0]
    assert "-m pure" in target and "tests/jobs" not in target
