"""The small frozen records the installation client answers with (a repository, an issue, a
comment, a pull request), read from a response's JSON by the fields the adapter uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RepoInfo:
    full_name: str
    default_branch: str
    clone_url: str
    private: bool
    squash_only: bool


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    author: str
    state: str
    is_pull_request: bool


@dataclass(frozen=True)
class CommentInfo:
    id: int
    body: str
    author: str
    is_bot: bool
    created_at: str
    updated_at: str = ""  # equal to created_at unless the body was edited
    author_id: int = 0  # the author's account id (stays when the login is renamed)


@dataclass(frozen=True)
class PullInfo:
    number: int
    node_id: str
    html_url: str
    draft: bool


def comment_info(data: dict[str, Any]) -> CommentInfo:
    user = data.get("user") or {}
    login = str(user.get("login", ""))
    return CommentInfo(id=int(data["id"]), body=data.get("body") or "", author=login,
                       is_bot=user.get("type") == "Bot" or login.endswith("[bot]"),
                       created_at=str(data.get("created_at", "")),
                       updated_at=str(data.get("updated_at") or data.get("created_at", "")),
                       author_id=int(user.get("id") or 0))


def pull_info(data: dict[str, Any]) -> PullInfo:
    return PullInfo(number=int(data["number"]), node_id=str(data.get("node_id", "")),
                    html_url=str(data.get("html_url", "")), draft=bool(data.get("draft")))
