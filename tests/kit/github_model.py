"""The fake GitHub's records: plain dataclasses that tests seed and read directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from tests.kit.github_ci_model import RepoCi
from tests.kit.github_permissions import granted_permissions

DEFAULT_INSTALLATION_ID = 1
FIRST_APP_ID = 4242
DEFAULT_APP_SLUG = "stepwise"
CONFIG_PATH = ".github/stepwise.yml"
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
BASE_ROLES = ("admin", "maintain", "write", "triage", "read")  # what a custom role may inherit
# What the REST API reports in `permission` for each role (the role itself is in `role_name`).
REPORTED_PERMISSION = {
    "admin": "admin", "maintain": "write", "write": "write",
    "triage": "read", "read": "read", "none": "none",
}


def utc_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass
class Reaction:
    id: int
    content: str
    user: str
    created_at: datetime
    user_type: str = "User"


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    user: str
    created_at: datetime
    updated_at: datetime
    user_type: str = "User"
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Issue:
    id: int
    number: int
    title: str
    body: str | None
    user: str
    created_at: datetime
    updated_at: datetime
    user_type: str = "User"
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    labels: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    assignees: list[str] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)

    @property
    def node_id(self) -> str:
        return f"I_fake{self.id}"

    @property
    def is_pull(self) -> bool:
        return False


@dataclass
class PullRequest(Issue):
    head_ref: str = ""
    head_sha: str = ""
    base_ref: str = "main"
    draft: bool = False
    merged: bool = False
    merged_at: datetime | None = None
    merged_by: str | None = None
    merge_commit_sha: str | None = None
    requested_reviewers: list[str] = field(default_factory=list)
    mergeable_computed: str = ""  # the `base..head` GitHub last computed mergeability for

    @property
    def node_id(self) -> str:
        return f"PR_fake{self.id}"

    @property
    def is_pull(self) -> bool:
        return True


@dataclass
class FakeRepo:
    owner: str
    name: str
    id: int
    path: Path
    default_branch: str = "main"
    private: bool = False
    owner_type: str = "Organization"
    allow_squash_merge: bool = True
    allow_merge_commit: bool = True
    allow_rebase_merge: bool = True
    drafts_supported: bool = True
    description: str | None = None
    topics: list[str] = field(default_factory=list)
    language: str | None = None
    archived: bool = False
    fork: bool = False
    created_at: datetime = field(default_factory=utc_now)
    issues: dict[int, Issue] = field(default_factory=dict)
    collaborators: dict[str, str] = field(default_factory=dict)
    next_number: int = 1
    clone_url: str = ""  # the bare repo's path (or its http URL when the fake serves git)
    ci: RepoCi = field(default_factory=RepoCi)  # check runs, statuses, protection, Actions

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def node_id(self) -> str:
        return f"R_fake{self.id}"

    @property
    def pulls(self) -> dict[int, PullRequest]:
        return {n: i for n, i in self.issues.items() if isinstance(i, PullRequest)}


@dataclass
class Installation:
    id: int
    account: str
    account_type: str = "Organization"
    repos: list[str] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=lambda: dict(granted_permissions()))
    created_at: datetime = field(default_factory=utc_now)
    suspended_at: datetime | None = None  # an owner suspended it: no token, no call (403)
    suspended_by: str = ""


@dataclass
class Token:
    token: str
    installation_id: int
    expires_at: datetime
    permissions: dict[str, str]
    repositories: list[str] | None = None  # repository names the token was narrowed to, or all
