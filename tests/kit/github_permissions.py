"""What the fake GitHub enforces like GitHub does: the App permissions granted by app.yml on each
endpoint (403 with X-Accepted-GitHub-Permissions), and the REST API versions it serves."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

APP_MANIFEST = Path(__file__).resolve().parents[2] / "app.yml"
LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}
NOT_ACCESSIBLE = "Resource not accessible by integration"
GITHUB_COM_VERSIONS = ("2022-11-28", "2026-03-10")
GHES_VERSIONS = ("2022-11-28",)  # GitHub Enterprise Server 3.17-3.19 document only this one
DEFAULT_VERSION = "2022-11-28"  # what GitHub assumes when a request names none


@functools.cache
def granted_permissions() -> dict[str, str]:
    """The App's `default_permissions` from app.yml: what an installation token carries."""
    manifest = yaml.safe_load(APP_MANIFEST.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in (manifest.get("default_permissions") or {}).items()}


def accepted_sets(spec: str) -> list[dict[str, str]]:
    """'issues=write; pull_requests=write' -> [{issues: write}, {pull_requests: write}]: each set
    (separated by ';') is enough on its own; the permissions within a set (',') are all needed."""
    sets = []
    for part in spec.split(";"):
        pairs = (item.strip().partition("=") for item in part.split(",") if item.strip())
        sets.append({name: level for name, _, level in pairs})
    return sets


def missing_permission(granted: dict[str, str], spec: str) -> bool:
    """True when no accepted set is covered by the token's permissions."""
    return not any(all(LEVELS.get(granted.get(name, "none"), 0) >= LEVELS[level]
                       for name, level in needed.items())
                   for needed in accepted_sets(spec))


def unsupported_version(headers: dict[str, str], served: tuple[str, ...]) -> str | None:
    """GitHub's 400 message for an X-GitHub-Api-Version this server does not serve, else None."""
    asked = headers.get("x-github-api-version", DEFAULT_VERSION)
    if asked in served:
        return None
    return (f"API version {asked!r} is not supported. Supported versions: {', '.join(served)}. "
            "See https://docs.github.com/rest/about-the-rest-api/api-versions")


def named_permissions(specs: list[str]) -> set[str]:
    """Every permission the accepted-permission headers `specs` name."""
    return {name for spec in specs if spec for needed in accepted_sets(spec) for name in needed}
