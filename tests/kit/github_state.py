"""State of the fake GitHub and the operations on it, shared by the HTTP routes and the tests' helpers."""

from __future__ import annotations

import itertools
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from tests.kit import github_git
from tests.kit.github_hooks import HookLog
from tests.kit.github_model import (
    BASE_ROLES,
    CONFIG_PATH,
    DEFAULT_APP_SLUG,
    DEFAULT_INSTALLATION_ID,
    FIRST_APP_ID,
    ROLES,
    Comment,
    FakeRepo,
    Installation,
    Issue,
    PullRequest,
    Token,
    utc_now,
)
from tests.kit.github_rate_limits import RateLimits
from tests.kit.webhooks import login_id

_app_ids = itertools.count(FIRST_APP_ID)


class GitHubState:
    """Everything the fake knows; `effects` logs each change made through the API, in order."""

    def __init__(
        self,
        *,
        root: Path | None = None,
        app_id: int | None = None,
        app_slug: str = DEFAULT_APP_SLUG,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="fakegh-")) if root is None else root
        # A new app id per fake by default: githubkit's process-wide token cache is keyed by it.
        self.app_id = next(_app_ids) if app_id is None else app_id
        self.app_slug = app_slug
        self.clock = clock
        self.lock = threading.RLock()
        self.repos: dict[str, FakeRepo] = {}
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, Token] = {}
        self.effects: list[str] = []
        self.signed_commits: dict[str, datetime] = {}  # commits GitHub signed (Git Data API, merges) -> when
        self.user_ids: dict[str, int] = {}
        self.rate_limits = RateLimits()  # GitHub's primary and content-creation limits
        self.freed_logins: set[str] = set()  # renamed away and not claimed again (404)
        self.custom_roles: dict[str, str] = {}  # organisation custom repository role -> base role
        self.teams: dict[tuple[str, str], set[str]] = {}  # (org, team slug) -> member logins
        self.hooks = HookLog()  # the App's webhook deliveries (tests/kit/github_hooks.py)
        self._ids = {"repo": 100_000, "issue": 200_000, "comment": 300_000, "reaction": 400_000,
                     "check_suite": 500_000, "check_run": 600_000, "status": 700_000,
                     "workflow_run": 800_000}

    @property
    def bot_login(self) -> str:
        return f"{self.app_slug}[bot]"

    def next_id(self, kind: str) -> int:
        self._ids[kind] += 1
        return self._ids[kind]

    def user_id(self, login: str) -> int:
        """A login's account id, made on first sight (ids are never reused, as on GitHub)."""
        if login not in self.user_ids:
            taken, uid = set(self.user_ids.values()), login_id(login)  # as webhook payloads say
            while uid in taken:  # a login freed by a rename is a new account
                uid += 1
            self.user_ids[login] = uid
            self.freed_logins.discard(login)
        return self.user_ids[login]

    def rename_user(self, old: str, new: str) -> None:
        """GitHub's account rename: the account (its id, its repository roles and team
        memberships) takes the login `new`; `old` is free for anyone to claim as a new account
        (with a new id and no access)."""
        with self.lock:
            self.user_ids[new] = self.user_ids.pop(old)
            self.freed_logins.add(old)
            for repo in self.repos.values():
                if old in repo.collaborators:
                    repo.collaborators[new] = repo.collaborators.pop(old)
            for members in self.teams.values():
                if old.lower() in members:
                    members.discard(old.lower())
                    members.add(new.lower())

    def clone_url_for(self, repo: FakeRepo) -> str:
        return str(repo.path)

    def effect(self, text: str) -> None:
        self.effects.append(text)

    def cleanup(self) -> None:
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    # --- seeding and inspection helpers for tests -------------------------------------------------

    def add_installation(self, installation_id: int, account: str, *,
                         account_type: str = "Organization") -> Installation:
        with self.lock:
            inst = self.installations.get(installation_id)
            if inst is None:
                inst = Installation(installation_id, account, account_type)
                self.installations[installation_id] = inst
            return inst

    def suspend(self, installation_id: int, by: str | None = "octocat") -> None:
        """An owner suspends (`by`) or unsuspends (None) the installation: GitHub then mints
        no token for it and refuses its tokens (403 "This installation has been suspended")."""
        with self.lock:
            inst = self.installations[installation_id]
            inst.suspended_at, inst.suspended_by = (self.clock(), by) if by else (None, "")

    def uninstall(self, installation_id: int) -> None:
        """An owner uninstalls the App: GitHub forgets the installation (404 as the App) and
        revokes its tokens (401)."""
        with self.lock:
            self.installations.pop(installation_id, None)
            for value, token in list(self.tokens.items()):
                if token.installation_id == installation_id:
                    del self.tokens[value]

    def remove_from_installation(self, installation_id: int, full_name: str) -> None:
        """An owner takes one repository out of the installation."""
        with self.lock:
            repos = self.installations[installation_id].repos
            if full_name in repos:
                repos.remove(full_name)

    def add_repo(
        self,
        owner: str,
        name: str,
        files: Mapping[str, str | bytes],
        *,
        default_branch: str = "main",
        config: str | None = None,
        installation_id: int | None = DEFAULT_INSTALLATION_ID,
        **options: object,
    ) -> FakeRepo:
        """A repository backed by a real bare git repo holding `files` (+ `config` as CONFIG_PATH)."""
        with self.lock:
            path = self.root / "git" / owner / f"{name}.git"
            github_git.init_bare(path, default_branch=default_branch)
            all_files: dict[str, str | bytes | None] = dict(files)
            if config is not None:
                all_files[CONFIG_PATH] = config
            if all_files:
                github_git.commit_files(path, default_branch, all_files, "Initial commit")
            repo = FakeRepo(owner, name, self.next_id("repo"), path, default_branch=default_branch)
            repo.clone_url = self.clone_url_for(repo)
            for key, value in options.items():
                if not hasattr(repo, key):
                    raise TypeError(f"FakeRepo has no option {key!r}")
                setattr(repo, key, value)
            self.repos[repo.full_name] = repo
            if installation_id is not None:
                self.add_installation(installation_id, owner, account_type=repo.owner_type).repos.append(
                    repo.full_name
                )
            return repo

    def repo(self, repo: FakeRepo | str) -> FakeRepo:
        return repo if isinstance(repo, FakeRepo) else self.repos[repo]

    def add_issue(
        self, repo: FakeRepo | str, title: str, body: str | None = "", user: str = "alice", *,
        labels: list[str] | None = None, user_type: str = "User",
    ) -> int:
        with self.lock:
            r = self.repo(repo)
            now = self.clock()
            number = r.next_number
            r.next_number += 1
            r.issues[number] = Issue(self.next_id("issue"), number, title, body, user, now, now,
                                     user_type=user_type, labels=list(labels or []))
            return number

    def set_permission(self, repo: FakeRepo | str, login: str, permission: str) -> None:
        """Give `login` a basic role, or a custom role added with add_custom_role."""
        if permission not in ROLES and permission not in self.custom_roles:
            known = sorted(self.custom_roles)
            raise ValueError(f"permission must be one of {ROLES} or a custom role {known}")
        with self.lock:
            self.repo(repo).collaborators[login] = permission

    def add_custom_role(self, name: str, *, base: str) -> None:
        """An organisation's custom repository role, inheriting the base role `base`."""
        if base not in BASE_ROLES:
            raise ValueError(f"a custom role inherits one of {BASE_ROLES}")
        with self.lock:
            self.custom_roles[name] = base

    def add_team(self, org: str, slug: str, members: Sequence[str] = ()) -> None:
        with self.lock:
            self.teams.setdefault((org.lower(), slug.lower()), set()).update(m.lower() for m in members)

    def role_of(self, repo: FakeRepo, login: str) -> str:
        """The role name as GitHub reports it in `role_name` (custom roles by their own name)."""
        if login in repo.collaborators:
            return repo.collaborators[login]
        return "none" if repo.private else "read"

    def base_role_of(self, repo: FakeRepo, login: str) -> str:
        role = self.role_of(repo, login)
        return self.custom_roles.get(role, role)

    def issue(self, repo: FakeRepo | str, number: int) -> Issue:
        return self.repo(repo).issues[number]

    def comments_on(self, repo: FakeRepo | str, number: int) -> list[Comment]:
        return list(self.issue(repo, number).comments)

    def find_comment(self, repo: FakeRepo, comment_id: int) -> Comment | None:
        for issue in repo.issues.values():
            for comment in issue.comments:
                if comment.id == comment_id:
                    return comment
        return None

    def add_comment(
        self, repo: FakeRepo | str, number: int, body: str, user: str = "alice", *, user_type: str = "User",
        log: bool = False,
    ) -> Comment:
        """Post a comment (a human's, unless `user` is the bot); only API calls pass `log=True`."""
        with self.lock:
            r = self.repo(repo)
            issue = r.issues[number]
            now = self.clock()
            comment = Comment(self.next_id("comment"), number, body, user, now, now, user_type=user_type)
            issue.comments.append(comment)
            issue.updated_at = now
            if log:
                first = body.splitlines()[0] if body else ""
                self.effect(f"{r.full_name}#{number}:comment-created:{first}")
            return comment

    def pull_for(self, repo: FakeRepo | str, head_branch: str, *,
                 state: str | None = None) -> PullRequest | None:
        """The newest pull request whose head is `head_branch` (optionally only `state` open/closed)."""
        found = [p for p in self.repo(repo).pulls.values()
                 if p.head_ref == head_branch and (state is None or p.state == state)]
        return found[-1] if found else None

    def branch_head(self, repo: FakeRepo | str, branch: str) -> str | None:
        return github_git.branch_head(self.repo(repo).path, branch)

    def git_log(self, repo: FakeRepo | str, branch: str) -> list[str]:
        """Commit subjects on `branch`, newest first (see `commits` for shas and full messages)."""
        return [c.subject for c in self.commits(repo, branch)]

    def commits(self, repo: FakeRepo | str, branch: str) -> list[github_git.CommitInfo]:
        return github_git.log(self.repo(repo).path, f"refs/heads/{branch}")

    def push_files(
        self, repo: FakeRepo | str, branch: str, files: Mapping[str, str | bytes | None], message: str,
        *, author: tuple[str, str] = ("Human Dev", "dev@example.invalid"),
    ) -> str:
        """Someone else's push: one commit of `files` (None deletes) on `branch` (new: from the default)."""
        with self.lock:
            r = self.repo(repo)
            return github_git.commit_files(r.path, branch, files, message, author=author,
                                           start=r.default_branch)

    def read_file(self, repo: FakeRepo | str, path: str, ref: str | None = None) -> str | None:
        r = self.repo(repo)
        rev = ref or r.default_branch
        if github_git.object_type(r.path, rev, path) != "blob":
            return None
        return github_git.read_blob(r.path, rev, path).decode()

    # --- operations shared by routes and tests ---------------------------------------------------

    def issue_token(self, installation_id: int, *, repositories: list[str] | None = None,
                    permissions: dict[str, str] | None = None,
                    lifetime: timedelta = timedelta(hours=1)) -> Token:
        with self.lock:
            inst = self.installations[installation_id]
            token = Token("ghs_" + secrets.token_hex(18), installation_id, self.clock() + lifetime,
                          dict(permissions or inst.permissions), repositories)
            self.tokens[token.token] = token
            return token

    def expire_tokens(self) -> None:
        """Make every issued token expired (the next API call with one answers 401)."""
        with self.lock:
            for token in self.tokens.values():
                token.expires_at = self.clock() - timedelta(seconds=1)

    def set_labels(self, repo: FakeRepo | str, number: int, *, add: Sequence[str] = (),
                   remove: Sequence[str] = (), log: bool = False) -> None:
        with self.lock:
            r = self.repo(repo)
            issue = r.issues[number]
            for name in add:
                if name not in issue.labels:
                    issue.labels.append(name)
                    if log:
                        self.effect(f"{r.full_name}#{number}:labeled:{name}")
            for name in remove:
                if name in issue.labels:
                    issue.labels.remove(name)
                    if log:
                        self.effect(f"{r.full_name}#{number}:unlabeled:{name}")

    def close_issue(self, repo: FakeRepo | str, number: int, *, reason: str = "completed",
                    log: bool = False) -> None:
        with self.lock:
            r = self.repo(repo)
            issue = r.issues[number]
            if issue.state == "closed":
                return
            issue.state, issue.state_reason, issue.closed_at = "closed", reason, self.clock()
            if log:
                self.effect(f"{r.full_name}#{number}:{'pr' if issue.is_pull else 'issue'}-closed")

    def merge_pull(self, repo: FakeRepo | str, number: int, *, method: str = "merge",
                   user: str = "alice") -> str:
        """Merge an open pull request in the bare repo (merge, squash or rebase); the merge commit sha."""
        with self.lock:
            r = self.repo(repo)
            pr = r.pulls[number]
            pr.head_sha = github_git.branch_head(r.path, pr.head_ref) or pr.head_sha
            message = f"Merge pull request #{number} from {r.owner}/{pr.head_ref}\n\n{pr.title}"
            if method == "squash":
                message = f"{pr.title} (#{number})"
            sha = github_git.merge(r.path, base=pr.base_ref, head=pr.head_ref, message=message, method=method)
            now = self.clock()
            pr.state, pr.merged, pr.merged_at, pr.closed_at = "closed", True, now, now
            pr.merged_by, pr.merge_commit_sha = user, sha
            return sha
