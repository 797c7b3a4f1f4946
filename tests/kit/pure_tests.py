"""Which test files test only the pure rooms, read from what they import: the `pure` marker.

A test file is pure when every first-party module it imports (anywhere in the file; a helper
module of tests/ is followed and must be pure by the same rule) lies in one of the pure rooms
that pyproject.toml's import contract lists ("the pure rooms ... import no I/O library"), it
imports none of that contract's I/O libraries, and its tests use no fixture beyond pytest's own
in-memory ones. The list is the contract's, so the fast target cannot drift from the layout
(`make test-pure`).
"""

from __future__ import annotations

import ast
import tomllib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PURE_CONTRACT_PREFIX = "the pure rooms"
FIRST_PARTY = ("jobs", "bot", "tests", "bench")
# pytest's own fixtures that touch nothing outside the process (tmp_path is a plain folder),
# and tests/conftest.py's autouse check of the fake GitHub (a no-op where no fake runs).
IN_MEMORY_FIXTURES = frozenset({"request", "monkeypatch", "capsys", "caplog", "tmp_path",
                                "recwarn", "subtests", "github_openapi_check"})


@cache
def pure_contract() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the pure rooms, the I/O libraries they may not import), from pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["name"].startswith(PURE_CONTRACT_PREFIX):
            return tuple(contract["source_modules"]), tuple(contract["forbidden_modules"])
    raise LookupError(f"pyproject.toml has no import contract named '{PURE_CONTRACT_PREFIX} ...'")


def imported_modules(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def within(module: str, rooms: tuple[str, ...]) -> bool:
    return any(module == room or module.startswith(room + ".") for room in rooms)


def first_party_is_pure(module: str, rooms: tuple[str, ...]) -> bool:
    """A pure room or a package above one (`from jobs.inputs import spec` names jobs.inputs), or
    a helper under tests/ whose own imports are pure, or one of a pure helper's names."""
    if within(module, rooms) or any(room.startswith(module + ".") for room in rooms):
        return True
    if module.split(".")[0] != "tests":
        return False
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        path = ROOT.joinpath(*parts[:end])
        if path.with_suffix(".py").is_file():
            return is_pure_file(path.with_suffix(".py"))
        if path.is_dir():
            return end == len(parts)  # a package of tests/ itself: nothing imported from it
    return False


def is_pure_source(source: str) -> bool:
    rooms, io_libraries = pure_contract()
    modules = imported_modules(source)
    if any(within(module, io_libraries) for module in modules):
        return False
    first_party = [module for module in modules if module.split(".")[0] in FIRST_PARTY]
    return bool(first_party) and all(first_party_is_pure(module, rooms) for module in first_party)


@cache
def is_pure_file(path: Path) -> bool:
    return is_pure_source(path.read_text(encoding="utf-8"))


def is_pure_test(path: Path, fixtures: tuple[str, ...]) -> bool:
    return set(fixtures) <= IN_MEMORY_FIXTURES and is_pure_file(path)
