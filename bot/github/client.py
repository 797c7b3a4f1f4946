"""The GitHub adapter's installation client: REST and GraphQL calls made with an installation's
token (bot/github/app.py mints the tokens, bot/github/ci.py holds the CI calls, records.py the
records it answers with, errors.py how a failure is classified).

Responses are read with `.json()` and turned into small frozen records, so the adapter depends
only on the fields it uses (githubkit's parsed models are strict about the newest schema).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

from githubkit import GitHub, TokenAuthStrategy
from githubkit.exception import RequestFailed

from bot.authz import base_role
from bot.github.api_versions import API_VERSIONS as API_VERSIONS
from bot.github.api_versions import DEFAULT_API_VERSION as DEFAULT_API_VERSION
from bot.github.api_versions import ApiVersion as ApiVersion
from bot.github.conditional import ConditionalReads
from bot.github.errors import CallRetry, ForgeError, classify, response_body, validation_errors
from bot.github.records import CommentInfo, IssueInfo, PullInfo, RepoInfo, comment_info, pull_info
from jobs.basics.errors import RetryClass


class GitHubApp(Protocol):
    """What an installation uses of bot/github/app.py's `GitHubApp` (which imports this module:
    a protocol keeps the two free of a cycle): its tokens and clients, the retry policy, the
    clock, the team answers it caches, the conditional reads it keeps, and its App id."""

    @property
    def retry(self) -> CallRetry: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def sleep(self) -> Callable[[float], None]: ...

    @property
    def team_answers(self) -> dict[tuple[int, str, str, str], tuple[bool, float]]: ...

    @property
    def conditional(self) -> ConditionalReads: ...

    @property
    def app_id(self) -> int: ...

    def token(self, installation_id: int) -> str: ...

    def forget_token(self, installation_id: int) -> None: ...

    def installation_client(self, installation_id: int) -> GitHub[TokenAuthStrategy]: ...

    def rest(self, gh: GitHub[Any]) -> Any: ...

TOKEN_MARGIN_S = 300  # mint a new installation token this long before the old one expires
TEAM_CACHE_S = 60  # how long a team membership answer is trusted
PER_PAGE = 100
MAX_PAGES = 50


T = TypeVar("T")
_RAISE = object()  # `_call(missing=...)` default: a 404 is an error like any other




class Installation:
    """REST and GraphQL calls made as one installation, with a fresh token per burst."""

    def __init__(self, app: GitHubApp, installation_id: int) -> None:
        self.app = app
        self.installation_id = installation_id

    def _gh(self) -> Any:
        """The REST namespace of this installation's client, in the configured API version."""
        return self.app.rest(self.app.installation_client(self.installation_id))

    def _call(self, action: Callable[[Any], Any], *,
              missing: Any = _RAISE) -> Any:
        """Run one API call; a 404 returns `missing` when given, other failures raise ForgeError."""
        for attempt in (1, 2):
            try:
                return action(self._gh())
            except RequestFailed as exc:
                if exc.response.status_code == 401 and attempt == 1:
                    self.app.forget_token(self.installation_id)  # revoked: mint a new one once
                    continue
                if exc.response.status_code == 404 and missing is not _RAISE:
                    return missing
                raise classify(exc) from None
            except Exception as exc:
                raise classify(exc) from None
        raise AssertionError("unreachable")  # the loop returns or raises

    def git_auth_args(self) -> list[str]:
        """`git -c` arguments that authenticate one git call; never stored in a remote URL."""
        secret = base64.b64encode(
            f"x-access-token:{self.app.token(self.installation_id)}".encode()).decode()
        return ["-c", f"http.extraHeader=Authorization: Basic {secret}"]

    def repo(self, owner: str, name: str) -> RepoInfo:
        data = self._call(lambda gh: response_json(gh.repos.get(owner, name)), missing=None)
        if data is None:
            raise ForgeError(f"the repository {owner}/{name} is gone or the App lost access to it",
                             code="repository_gone", retry_class=RetryClass.DO_NOT_RETRY,
                             hint="reinstall the App on the repository, then label the issue "
                             "again to start a new job")
        squash_only = bool(data.get("allow_squash_merge", True)) and not (
            data.get("allow_merge_commit", True) or data.get("allow_rebase_merge", True))
        return RepoInfo(full_name=data["full_name"], default_branch=data["default_branch"],
                        clone_url=data["clone_url"], private=bool(data.get("private")),
                        squash_only=squash_only)

    def file(self, owner: str, name: str, path: str, ref: str) -> str | None:
        data = self._call(lambda gh: response_json(gh.repos.get_content(owner, name, path, ref=ref)),
                          missing=None)
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        try:
            if data.get("encoding", "base64") != "base64":
                raise ValueError(f"encoding {data.get('encoding')!r}")
            # GitHub wraps the base64 text in lines; anything else in it is a broken answer.
            raw = base64.b64decode("".join(str(data.get("content", "")).split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ForgeError(f"GitHub sent {path}@{ref} in a form that does not decode ({exc})",
                             code="github_bad_content", retry_class=RetryClass.NEEDS_HUMAN,
                             hint=f"check {path} on GitHub, then retry") from None
        return raw.decode("utf-8", errors="replace")

    def issue(self, owner: str, name: str, number: int) -> IssueInfo:
        data = self._call(lambda gh: response_json(gh.issues.get(owner, name, number)))
        user = data.get("user") if isinstance(data, dict) else None
        if not isinstance(user, dict) or not user.get("login"):
            raise ForgeError(f"GitHub gave issue #{number} of {owner}/{name} no author (a deleted "
                             "account shows as a null user)", code="issue_without_author",
                             retry_class=RetryClass.NEEDS_HUMAN,
                             hint="a maintainer can open a new issue with the same task")
        return IssueInfo(number=data["number"], title=data["title"], body=data.get("body") or "",
                         author=str(user["login"]), state=data["state"],
                         is_pull_request="pull_request" in data)

    def comments(self, owner: str, name: str, number: int, *,
                 since: datetime | None = None) -> list[CommentInfo]:
        """The comments of an issue or pull request, oldest first; with `since`, only those
        created or edited at or after it (GitHub's `since`, by `updated_at`). The listing is
        polled (the reconciler's read-back, finding a marker), so it is conditional: sent with
        the last answer's ETag, an unchanged page is a 304 that costs no rate limit."""
        found: list[CommentInfo] = []
        window: dict[str, Any] = {} if since is None else {"since": since}
        for page in range(1, MAX_PAGES + 1):
            where = (self.installation_id, owner, name, "comments", number, since, page)

            def fetch(gh: Any, page: int = page, where: Any = where) -> Any:
                return self.app.conditional.read(where, lambda headers: gh.issues.list_comments(
                    owner, name, number, per_page=PER_PAGE, page=page, headers=headers or None,
                    **window))

            batch: list[dict[str, Any]] = self._call(fetch)
            found.extend(comment_info(item) for item in batch)
            if len(batch) < PER_PAGE:
                break
        return found

    def create_comment(self, owner: str, name: str, number: int, body: str, *,
                       marker: str | None = None) -> CommentInfo:
        """Post a comment. With `marker` (a hidden tag in `body`) it is posted once even when
        GitHub made it but answered with a fault: the retry finds it by its marker first."""

        def post() -> CommentInfo:
            return comment_info(self._call(lambda gh: response_json(gh.issues.create_comment(
                owner, name, number, body=body))))

        if marker is None:
            return post()
        return self._create_once(post, lambda: self.find_comment(owner, name, number, marker))

    def find_comment(self, owner: str, name: str, number: int, marker: str) -> CommentInfo | None:
        """The App's comment carrying `marker`, if there is one."""
        return next((c for c in self.comments(owner, name, number)
                     if c.is_bot and marker in c.body), None)

    def _create_once(self, create: Callable[[], T], find: Callable[[], T | None]) -> T:
        """A create that GitHub may have done although it answered with a fault ("done, then
        502"): after a transient fault, look for what the try made before trying again."""
        count = 0
        while True:
            try:
                return create()
            except ForgeError as exc:
                wait = self._wait_after(exc, count)
                if wait is None:
                    raise
            self.app.sleep(wait)
            found = find()
            if found is not None:
                return found
            count += 1

    def _wait_after(self, exc: ForgeError, count: int) -> float | None:
        if exc.retry_class is not RetryClass.AUTO_RETRY:
            return None
        policy = self.app.retry
        if count >= len(policy.backoff_s):
            return None
        wait = max(float(policy.backoff_s[count]), float(exc.evidence.get("retry_after", 0)))
        return wait if wait <= policy.max_wait_s else None

    def update_comment(self, owner: str, name: str, comment_id: int, body: str) -> bool:
        """Edit a comment; False when it no longer exists."""
        return bool(self._call(lambda gh: gh.issues.update_comment(
            owner, name, comment_id, body=body) is not None, missing=False))

    def react(self, owner: str, name: str, comment_id: int, content: str = "+1") -> None:
        self._call(lambda gh: gh.reactions.create_for_issue_comment(
            owner, name, comment_id, content=content))

    def react_to_issue(self, owner: str, name: str, number: int, content: str = "eyes") -> None:
        """React to the issue itself (👀: the label was seen); reacting twice is harmless."""
        self._call(lambda gh: gh.reactions.create_for_issue(owner, name, number, content=content))

    def add_assignees(self, owner: str, name: str, number: int, logins: list[str]) -> None:
        """Assign the issue or pull request; GitHub ignores logins it cannot assign."""
        self._call(lambda gh: gh.issues.add_assignees(owner, name, number, assignees=logins))

    def request_reviewers(self, owner: str, name: str, number: int, logins: list[str]) -> None:
        """Ask `logins` to review the pull request (already asked: nothing changes)."""
        self._call(lambda gh: gh.pulls.request_reviewers(owner, name, number, reviewers=logins))

    def permission(self, owner: str, name: str, login: str) -> str:
        """The user's real role: admin, maintain, write, triage, read or none. A custom
        repository role counts as the base role it inherits."""
        if not login:
            return "none"
        data = self._call(lambda gh: response_json(gh.repos.get_collaborator_permission_level(
            owner, name, quote(login, safe=""))), missing={})
        return base_role(data)

    def user_id(self, login: str) -> int:
        """The numeric id of the account that holds `login` now; 0 when none does."""
        data = self._call(lambda gh: response_json(gh.users.get_by_username(
            quote(login, safe=""))), missing={})
        return int(data.get("id") or 0) if isinstance(data, dict) else 0

    def is_team_member(self, org: str, team_slug: str, login: str) -> bool:
        """Whether `login` is an active member of @org/team_slug (needs `members: read`);
        answers are cached for TEAM_CACHE_S."""
        key = (self.installation_id, org.lower(), team_slug.lower(), login.lower())
        cached = self.app.team_answers.get(key)
        if cached is not None and cached[1] > self.app.clock():
            return cached[0]
        data = self._call(lambda gh: response_json(gh.teams.get_membership_for_user_in_org(
            quote(org, safe=""), quote(team_slug, safe=""), quote(login, safe=""))), missing={})
        member = isinstance(data, dict) and data.get("state") == "active"
        self.app.team_answers[key] = (member, self.app.clock() + TEAM_CACHE_S)
        return member

    def pull_head(self, owner: str, name: str, number: int) -> str:
        """The head branch of pull request `number`."""
        return str(self._call(lambda gh: response_json(gh.pulls.get(owner, name, number)))
                   ["head"]["ref"])

    def find_pull(self, owner: str, name: str, head_branch: str) -> PullInfo | None:
        items = self._call(lambda gh: response_json(gh.pulls.list(
            owner, name, state="open", head=f"{owner}:{head_branch}")))
        return pull_info(items[0]) if items else None

    def create_pull(self, owner: str, name: str, *, title: str, head: str, base: str,
                    body: str) -> tuple[PullInfo, bool]:
        """Open a draft PR (a normal one where drafts are refused); returns (pull, is_draft).
        Repeat-safe: after a fault, an open pull request from `head` is the one to use."""

        def find() -> tuple[PullInfo, bool] | None:
            existing = self.find_pull(owner, name, head)
            return None if existing is None else (existing, existing.draft)

        return self._create_once(
            lambda: self._open_pull(owner, name, title=title, head=head, base=base, body=body),
            find)

    def _open_pull(self, owner: str, name: str, *, title: str, head: str, base: str,
                   body: str) -> tuple[PullInfo, bool]:
        for draft in (True, False):
            try:
                gh = self._gh()
                data = response_json(gh.pulls.create(owner, name, title=title, head=head,
                                                    base=base, body=body, draft=draft))
                return pull_info(data), draft
            except RequestFailed as exc:
                if exc.response.status_code != 422:
                    raise classify(exc) from None
                refusal = pull_refusals(exc)
                if "exists" in refusal:
                    existing = self.find_pull(owner, name, head)
                    if existing is not None:
                        return existing, existing.draft
                if draft and "draft" in refusal:
                    continue
                raise classify(exc) from None
            except Exception as exc:
                raise classify(exc) from None
        raise ForgeError("GitHub refused the pull request", hint="open it by hand")

    def update_pull_body(self, owner: str, name: str, number: int, body: str) -> None:
        self._call(lambda gh: gh.pulls.update(owner, name, number, body=body))

    def reopen_pull(self, owner: str, name: str, number: int) -> None:
        """Reopen pull request `number` (an open one stays open)."""
        self._call(lambda gh: gh.pulls.update(owner, name, number, state="open"))

    def mark_ready(self, node_id: str) -> None:
        query = ("mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id})"
                 " { pullRequest { isDraft } } }")
        self._call(lambda _rest: self.app.installation_client(self.installation_id).graphql(
            query, {"id": node_id}))


def pull_refusals(exc: RequestFailed) -> set[str]:
    """What a 422 to a pull request's creation says, read from GitHub's structured `errors`
    (field, code, message of each): `exists` (one is open from this head), `draft` (drafts are
    not available here), `empty` (no commits between), `branch` (head or base invalid). Only an
    answer without `errors` is read from its message."""
    details = validation_errors(response_body(exc)) or [{"message": exc.response.text}]
    found = set()
    for detail in details:
        text, field = detail.get("message", "").lower(), detail.get("field", "")
        if field == "draft" or "draft" in text:
            found.add("draft")
        if "already exists" in text or detail.get("code") == "already_exists":
            found.add("exists")
        if "no commits between" in text:
            found.add("empty")
        if field in ("head", "base"):
            found.add("branch")
    return found


def response_json(response: Any) -> Any:
    """A githubkit response's JSON, without its parsed models (strict about the newest schema)."""
    return response.json()


def preload_api_modules(version: ApiVersion = DEFAULT_API_VERSION) -> None:
    """Import the REST namespaces this adapter uses (githubkit loads them on first access)."""
    client = GitHub(TokenAuthStrategy("preload"), trust_env=False)
    for namespace in ("apps", "issues", "pulls", "reactions", "repos", "teams"):
        getattr(client.rest(version), namespace)
