"""Recorded material nobody on the project wrote, installed from npm into .cache/npm-fixtures/:
`@octokit/webhooks-examples` (every payload the community recorded, github.com and GHES) and
`@octokit/openapi` (GitHub's own REST API description, which the fake GitHub is checked against).

./scripts/test installs it (and Debian's nodejs and npm when missing); a test run without it
installs it here when npm is on PATH. Under CI=true a missing piece is a failure, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("STEPWISE_NPM_FIXTURES", ROOT / ".cache" / "npm-fixtures"))
WEBHOOK_EXAMPLES = "@octokit/webhooks-examples"
WEBHOOK_EXAMPLES_VERSION = "7.6.1"  # keep in step with scripts/test
OPENAPI = "@octokit/openapi"
OPENAPI_VERSION = "23.0.2"  # keep in step with scripts/test


def package_dir(name: str = WEBHOOK_EXAMPLES, version: str = WEBHOOK_EXAMPLES_VERSION) -> Path:
    """The installed package, installing the pinned version into the cache when it is missing."""
    where = CACHE / "node_modules" / name
    if _installed_version(where) == version:
        return where
    npm = shutil.which("npm")
    if npm is None:
        message = f"{name} is not in {CACHE} and npm is missing (./scripts/test installs both)"
        if os.environ.get("CI") == "true":
            raise RuntimeError(message)
        pytest.skip(message)
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE),
                    f"{name}@{version}"], check=True, timeout=600)
    assert _installed_version(where) == version, f"npm did not install {name}@{version}"
    return where


def _installed_version(where: Path) -> str | None:
    try:
        return str(json.loads((where / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def webhook_examples() -> list[tuple[str, dict[str, Any]]]:
    """Every distinct recorded payload as (X-GitHub-Event, payload), github.com's and GHES's."""
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for index in sorted(package_dir().glob("*/index.json")):
        for event in json.loads(index.read_text()):
            for example in event["examples"]:
                key = hashlib.sha256(json.dumps(example, sort_keys=True).encode()).hexdigest()
                found.setdefault(key, (event["name"], example))
    return list(found.values())
