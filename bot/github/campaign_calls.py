"""The GitHub calls campaigns add to an installation's client: who can read a repository,
tracking issues created once, and the dashboard written into the campaign issue's body (the
repositories an installation reaches are bot/github/installed_repos.py)."""

from __future__ import annotations

from typing import Any

from bot.github.client import MAX_PAGES, PER_PAGE, Installation, response_json
from jobs.basics.github_limits import fit_title


def readers(client: Installation, owner: str, name: str) -> frozenset[str] | None:
    """The logins (lower case) who can read a repository, from its collaborators (GitHub lists
    outside collaborators, members through teams or the organisation's base role, and owners);
    None when there are more than one listing holds, so no comparison can rely on it."""
    found: set[str] = set()
    for page in range(1, MAX_PAGES + 1):

        def fetch(gh: Any, page: int = page) -> Any:
            return response_json(gh.repos.list_collaborators(
                owner, name, affiliation="all", per_page=PER_PAGE, page=page))

        batch = client._call(fetch)
        found |= {str(c["login"]).lower() for c in batch
                  if (c.get("permissions") or {}).get("pull")}
        if len(batch) < PER_PAGE:
            return frozenset(found)
    return None


def find_issue_by_marker(client: Installation, owner: str, name: str, *, creator: str,
                         marker: str) -> int | None:
    """The number of an issue `creator` opened whose body holds `marker`, newest first, paged
    past the first 100 (a repository where the App opened hundreds of issues)."""
    for page in range(1, MAX_PAGES + 1):

        def fetch(gh: Any, page: int = page) -> Any:
            return response_json(gh.issues.list_for_repo(
                owner, name, creator=creator, state="all", per_page=PER_PAGE, page=page))

        data = client._call(fetch)
        found = next((int(i["number"]) for i in data if marker in (i.get("body") or "")), None)
        if found is not None or len(data) < PER_PAGE:
            return found
    return None


def create_issue_once(client: Installation, owner: str, name: str, *, title: str, body: str,
                      marker: str, creator: str) -> int:
    """Open an issue holding `marker`, or find the one a crashed try already opened."""
    found = find_issue_by_marker(client, owner, name, creator=creator, marker=marker)
    if found is not None:
        return found
    data = client._call(lambda gh: response_json(gh.issues.create(
        owner, name, title=fit_title(title), body=body)))
    return int(data["number"])


def update_issue_body(client: Installation, owner: str, name: str, number: int,
                      body: str) -> None:
    client._call(lambda gh: gh.issues.update(owner, name, number, body=body))
