"""The repositories an installation reaches, as GitHub lists them: the facts a campaign selects
on (topics, language, archived, fork, visibility) and what recovery needs to find jobs there
(the default branch, the clone URL)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.github.client import MAX_PAGES, PER_PAGE, Installation, response_json


@dataclass(frozen=True)
class InstalledRepo:
    full_name: str
    topics: tuple[str, ...]
    language: str | None
    archived: bool
    fork: bool
    default_branch: str
    clone_url: str
    public: bool = False  # `visibility: public`; private and internal ones are not


def installation_repositories(client: Installation) -> list[InstalledRepo]:
    """Every repository the installation reaches (paged, at most MAX_PAGES × PER_PAGE)."""
    found: list[InstalledRepo] = []
    for page in range(1, MAX_PAGES + 1):

        def fetch(gh: Any, page: int = page) -> Any:
            return response_json(gh.apps.list_repos_accessible_to_installation(
                per_page=PER_PAGE, page=page))

        data = client._call(fetch)
        batch = data.get("repositories", []) if isinstance(data, dict) else []
        found += [InstalledRepo(full_name=r["full_name"], topics=tuple(r.get("topics") or ()),
                                language=r.get("language"), archived=bool(r.get("archived")),
                                fork=bool(r.get("fork")), default_branch=r["default_branch"],
                                clone_url=r["clone_url"],
                                public=r.get("visibility", "private" if r.get("private")
                                             else "public") == "public") for r in batch]
        if len(batch) < PER_PAGE:
            break
    return found
