"""Reproducible installs: requirements.lock pins every dependency at the version tested, within
pyproject.toml's ranges, and every install path (scripts/_venv.sh, the Dockerfile, the README's
install line) installs with it."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not pinned with =="
            found[canonicalize_name(name)] = version
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in [*project["dependencies"], *extras]]


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    pinned = pins()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} is not in requirements.lock (make lock)"
        assert requirement.specifier.contains(pinned[name], prereleases=True), \
            f"requirements.lock pins {name}=={pinned[name]}, outside {requirement}"


def test_redis_and_rq_are_held_to_the_tested_major_versions() -> None:
    ranges = {canonicalize_name(r.name): r.specifier for r in declared()}
    assert not ranges["redis"].contains("9.0.0") and not ranges["redis"].contains("5.0.0")
    assert not ranges["rq"].contains("3.1.0") and not ranges["rq"].contains("2.0.0")


def test_the_virtualenv_has_the_pinned_versions() -> None:
    """scripts/_venv.sh installs with the lock, so what the tests ran on is what is pinned."""
    wrong = {}
    for name, version in pins().items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if installed != version:
            wrong[name] = (installed, version)
    assert wrong == {}, "installed vs pinned (run ./scripts/test to reinstall, or make lock)"


def test_every_install_path_uses_the_lock() -> None:
    assert '-c "$ROOT/requirements.lock"' in (ROOT / "scripts" / "_venv.sh").read_text()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY requirements.lock" in dockerfile
    assert "pip install --no-cache-dir -c requirements.lock ." in dockerfile
    assert "pip install -c requirements.lock ." in (ROOT / "README.md").read_text()
