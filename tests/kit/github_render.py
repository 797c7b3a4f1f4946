"""JSON shapes of the fake GitHub's objects, complete enough for githubkit's strict response models."""

from __future__ import annotations

import base64
import zlib
from datetime import datetime
from typing import Any
from urllib.parse import quote

from tests.kit import github_git
from tests.kit.github_mergeability import mergeability
from tests.kit.github_model import (
    REPORTED_PERMISSION,
    Comment,
    FakeRepo,
    Installation,
    Issue,
    PullRequest,
    Reaction,
)
from tests.kit.github_state import GitHubState

JSON = dict[str, Any]
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
USER_URL_SUFFIXES = {
    "followers_url": "/followers", "following_url": "/following{/other_user}",
    "gists_url": "/gists{/gist_id}",
    "starred_url": "/starred{/owner}{/repo}", "subscriptions_url": "/subscriptions",
    "organizations_url": "/orgs",
    "repos_url": "/repos", "events_url": "/events{/privacy}", "received_events_url": "/received_events",
}
REPO_URL_SUFFIXES = {
    "archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}",
    "blobs_url": "/git/blobs{/sha}",
    "branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}",
    "comments_url": "/comments{/number}", "commits_url": "/commits{/sha}",
    "compare_url": "/compare/{base}...{head}",
    "contents_url": "/contents/{+path}", "contributors_url": "/contributors",
    "deployments_url": "/deployments",
    "downloads_url": "/downloads", "events_url": "/events", "forks_url": "/forks",
    "git_commits_url": "/git/commits{/sha}", "git_refs_url": "/git/refs{/sha}",
    "git_tags_url": "/git/tags{/sha}",
    "hooks_url": "/hooks", "issue_comment_url": "/issues/comments{/number}",
    "issue_events_url": "/issues/events{/number}", "issues_url": "/issues{/number}",
    "keys_url": "/keys{/key_id}",
    "labels_url": "/labels{/name}", "languages_url": "/languages", "merges_url": "/merges",
    "milestones_url": "/milestones{/number}", "notifications_url": "/notifications{?since,all,participating}",
    "pulls_url": "/pulls{/number}", "releases_url": "/releases{/id}", "stargazers_url": "/stargazers",
    "statuses_url": "/statuses/{sha}", "subscribers_url": "/subscribers", "subscription_url": "/subscription",
    "tags_url": "/tags", "teams_url": "/teams", "trees_url": "/git/trees{/sha}",
}


def ts(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


class Renderer:
    """Turns state objects into REST JSON; `api` is the API root, `web` the html root (no trailing slash)."""

    def __init__(self, state: GitHubState, *, api: str, web: str) -> None:
        self.state, self.api, self.web = state, api, web

    def user(self, login: str, user_type: str = "User") -> JSON:
        uid = self.state.user_id(login)
        url = f"{self.api}/users/{login}"
        return {
            "login": login, "id": uid, "node_id": f"U_fake{uid}",
            "avatar_url": f"{self.web}/avatars/u/{uid}?v=4", "gravatar_id": "", "url": url,
            "html_url": f"{self.web}/{login.removesuffix('[bot]')}",
            **{key: url + suffix for key, suffix in USER_URL_SUFFIXES.items()},
            "type": user_type, "user_view_type": "public", "site_admin": False,
        }

    def owner(self, repo: FakeRepo) -> JSON:
        return self.user(repo.owner, repo.owner_type)

    def repository(self, repo: FakeRepo) -> JSON:
        """The `Repository` shape (nested in pull requests, payloads and token responses)."""
        api_url = f"{self.api}/repos/{repo.full_name}"
        html = f"{self.web}/{repo.full_name}"
        pushed = ts(pushed_at(repo))
        return {
            "id": repo.id, "node_id": repo.node_id, "name": repo.name, "full_name": repo.full_name,
            "private": repo.private, "owner": self.owner(repo), "html_url": html,
            "description": repo.description,
            "fork": repo.fork,
            "url": api_url, **{key: api_url + suffix for key, suffix in REPO_URL_SUFFIXES.items()},
            "git_url": f"git://{html.split('://', 1)[1]}.git",
            "ssh_url": f"git@fake.invalid:{repo.full_name}.git",
            "clone_url": repo.clone_url, "svn_url": html, "mirror_url": None, "homepage": None,
            "language": repo.language,
            "created_at": ts(repo.created_at), "updated_at": pushed, "pushed_at": pushed, "size": 1,
            "forks_count": 0, "stargazers_count": 0, "watchers_count": 0,
            "open_issues_count": self._open(repo),
            "forks": 0, "open_issues": self._open(repo), "watchers": 0, "default_branch": repo.default_branch,
            "license": None, "is_template": False, "topics": list(repo.topics),
            "visibility": "private" if repo.private else "public",
            "has_issues": True, "has_projects": True, "has_wiki": True, "has_pages": False,
            "has_downloads": True,
            "has_discussions": False, "archived": repo.archived, "disabled": False, "allow_forking": True,
            "web_commit_signoff_required": False,
        }

    def full_repository(self, repo: FakeRepo) -> JSON:
        return {
            **self.repository(repo),
            "allow_squash_merge": repo.allow_squash_merge, "allow_merge_commit": repo.allow_merge_commit,
            "allow_rebase_merge": repo.allow_rebase_merge, "allow_auto_merge": False,
            "delete_branch_on_merge": False, "allow_update_branch": False, "temp_clone_token": None,
            "subscribers_count": 0, "network_count": 0,
            "permissions": {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True},
        }

    def _open(self, repo: FakeRepo) -> int:
        return sum(1 for issue in repo.issues.values() if issue.state == "open")

    def installation(self, inst: Installation) -> JSON:
        account = self.user(inst.account, inst.account_type)
        return {
            "id": inst.id, "client_id": "Iv1.fake", "account": account, "repository_selection": "selected",
            "access_tokens_url": f"{self.api}/app/installations/{inst.id}/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": f"{self.web}/organizations/{inst.account}/settings/installations/{inst.id}",
            "app_id": self.state.app_id, "app_slug": self.state.app_slug, "target_id": account["id"],
            "target_type": inst.account_type, "permissions": dict(inst.permissions),
            "events": ["issues", "issue_comment", "pull_request", "push"],
            "created_at": ts(inst.created_at), "updated_at": ts(inst.created_at), "single_file_name": None,
            "has_multiple_single_files": False, "single_file_paths": [],
            "suspended_by": self.user(inst.suspended_by) if inst.suspended_by else None,
            "suspended_at": ts(inst.suspended_at) if inst.suspended_at else None,
        }

    def label(self, repo: FakeRepo, name: str) -> JSON:
        label_id = zlib.crc32(f"{repo.full_name}:{name}".encode())
        return {
            "id": label_id, "node_id": f"LA_fake{label_id}",
            "url": f"{self.api}/repos/{repo.full_name}/labels/{quote(name)}",
            "name": name, "description": None, "color": "ededed", "default": False, "archived_at": None,
            "archived_by": None,
        }

    def association(self, repo: FakeRepo, login: str) -> str:
        if login == repo.owner:
            return "OWNER"
        if repo.collaborators.get(login, "none") != "none":
            return "COLLABORATOR"
        return "NONE"

    def reaction_rollup(self, url: str, reactions: list[Reaction]) -> JSON:
        counts = {content: sum(1 for r in reactions if r.content == content) for content in REACTIONS}
        return {"url": url, "total_count": len(reactions), **counts}

    def issue(self, repo: FakeRepo, issue: Issue) -> JSON:
        url = f"{self.api}/repos/{repo.full_name}/issues/{issue.number}"
        kind = "pull" if issue.is_pull else "issues"
        data: JSON = {
            "url": url, "repository_url": f"{self.api}/repos/{repo.full_name}",
            "labels_url": url + "/labels{/name}", "comments_url": url + "/comments",
            "events_url": url + "/events",
            "html_url": f"{self.web}/{repo.full_name}/{kind}/{issue.number}", "id": issue.id,
            "node_id": issue.node_id, "number": issue.number, "title": issue.title,
            "user": self.user(issue.user, issue.user_type),
            "labels": [self.label(repo, n) for n in issue.labels],
            "state": issue.state, "state_reason": issue.state_reason, "locked": False,
            "assignee": self.user(issue.assignees[0]) if issue.assignees else None,
            "assignees": [self.user(login) for login in issue.assignees], "milestone": None,
            "comments": len(issue.comments),
            "created_at": ts(issue.created_at), "updated_at": ts(issue.updated_at),
            "closed_at": ts(issue.closed_at),
            "author_association": self.association(repo, issue.user), "active_lock_reason": None,
            "body": issue.body, "closed_by": None, "timeline_url": url + "/timeline",
            "performed_via_github_app": None,
            "reactions": self.reaction_rollup(url + "/reactions", issue.reactions),
        }
        if isinstance(issue, PullRequest):
            html = data["html_url"]
            data["draft"] = issue.draft
            data["pull_request"] = {
                "url": f"{self.api}/repos/{repo.full_name}/pulls/{issue.number}", "html_url": html,
                "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": ts(issue.merged_at),
            }
        return data

    def comment(self, repo: FakeRepo, comment: Comment) -> JSON:
        url = f"{self.api}/repos/{repo.full_name}/issues/comments/{comment.id}"
        kind = "pull" if repo.issues[comment.issue_number].is_pull else "issues"
        return {
            "url": url, "html_url": f"{self.web}/{repo.full_name}/{kind}/{comment.issue_number}"
                                    f"#issuecomment-{comment.id}",
            "issue_url": f"{self.api}/repos/{repo.full_name}/issues/{comment.issue_number}",
            "id": comment.id, "node_id": f"IC_fake{comment.id}",
            "user": self.user(comment.user, comment.user_type),
            "created_at": ts(comment.created_at), "updated_at": ts(comment.updated_at),
            "author_association": self.association(repo, comment.user), "body": comment.body,
            "reactions": self.reaction_rollup(url + "/reactions", comment.reactions),
            "performed_via_github_app": None,
        }

    def reaction(self, reaction: Reaction) -> JSON:
        return {
            "id": reaction.id, "node_id": f"REA_fake{reaction.id}",
            "user": self.user(reaction.user, reaction.user_type),
            "content": reaction.content, "created_at": ts(reaction.created_at),
        }

    def permission(self, repo: FakeRepo, login: str) -> JSON:
        """A custom role shows its own name in role_name; `permission` and the flags are those of the
        base role it inherits (maintain reported as write, triage as read)."""
        role = self.state.role_of(repo, login)
        base = self.state.base_role_of(repo, login)
        rank = ("none", "read", "triage", "write", "maintain", "admin").index(base)
        flags = {"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4,
                 "admin": rank >= 5}
        return {
            "permission": REPORTED_PERMISSION[base], "role_name": role,
            "user": {**self.user(login), "permissions": flags, "role_name": role},
        }

    def pull(self, repo: FakeRepo, pr: PullRequest, *, simple: bool = False) -> JSON:
        issue = self.issue(repo, pr)
        url = f"{self.api}/repos/{repo.full_name}/pulls/{pr.number}"
        html = issue["html_url"]
        base_sha = github_git.branch_head(repo.path, pr.base_ref) or ""
        links = {
            "self": url, "html": html, "issue": issue["url"], "comments": issue["comments_url"],
            "review_comments": url + "/comments", "review_comment": f"{self.api}/repos/{repo.full_name}"
                                                                    "/pulls/comments{/number}",
            "commits": url + "/commits",
            "statuses": f"{self.api}/repos/{repo.full_name}/statuses/{pr.head_sha}",
        }
        data: JSON = {
            "url": url, "id": pr.id, "node_id": pr.node_id, "html_url": html, "diff_url": html + ".diff",
            "patch_url": html + ".patch", "issue_url": issue["url"], "commits_url": links["commits"],
            "review_comments_url": links["review_comments"], "review_comment_url": links["review_comment"],
            "comments_url": issue["comments_url"], "statuses_url": links["statuses"], "number": pr.number,
            "state": pr.state, "locked": False, "title": pr.title, "user": issue["user"], "body": pr.body,
            "labels": issue["labels"], "milestone": None, "active_lock_reason": None,
            "created_at": issue["created_at"], "updated_at": issue["updated_at"],
            "closed_at": issue["closed_at"],
            "merged_at": ts(pr.merged_at), "merge_commit_sha": pr.merge_commit_sha,
            "assignee": issue["assignee"], "assignees": issue["assignees"],
            "requested_reviewers": [self.user(login) for login in pr.requested_reviewers],
            "requested_teams": [],
            "head": self._ref(repo, pr.head_ref, pr.head_sha), "base": self._ref(repo, pr.base_ref, base_sha),
            "_links": {key: {"href": href} for key, href in links.items()},
            "author_association": issue["author_association"], "auto_merge": None, "draft": pr.draft,
        }
        if simple:
            return data
        commits, additions, deletions, files = self._diff_stats(repo, pr)
        mergeable, mergeable_state = mergeability(self.state, repo, pr)
        return {
            **data, "merged": pr.merged, "mergeable": mergeable,
            "rebaseable": mergeable, "mergeable_state": mergeable_state,
            "merged_by": self.user(pr.merged_by) if pr.merged_by else None, "comments": len(pr.comments),
            "review_comments": 0, "maintainer_can_modify": False, "commits": commits,
            "additions": additions, "deletions": deletions, "changed_files": files,
        }

    def _ref(self, repo: FakeRepo, ref: str, sha: str) -> JSON:
        return {"label": f"{repo.owner}:{ref}", "ref": ref, "sha": sha, "user": self.owner(repo),
                "repo": self.repository(repo)}

    def _diff_stats(self, repo: FakeRepo, pr: PullRequest) -> tuple[int, int, int, int]:
        base = github_git.branch_head(repo.path, pr.base_ref)
        if not base or not pr.head_sha or pr.merged:
            return 0, 0, 0, 0
        commits = github_git.commits_between(repo.path, base, pr.head_sha)
        numstat = github_git.git_text(repo.path, "diff", "--numstat", f"{base}...{pr.head_sha}")
        rows = [line.split("\t") for line in numstat.splitlines() if line]
        added = sum(int(r[0]) for r in rows if r[0].isdigit())
        removed = sum(int(r[1]) for r in rows if r[1].isdigit())
        return commits, added, removed, len(rows)

    def content(self, repo: FakeRepo, path: str, ref: str) -> JSON | list[JSON] | None:
        """A file (base64 with GitHub's line breaks every 60 characters), a directory listing, or None."""
        kind = github_git.object_type(repo.path, ref, path) if path else "tree"
        if kind == "blob":
            data = github_git.read_blob(repo.path, ref, path)
            encoded = base64.b64encode(data).decode()
            wrapped = "".join(encoded[i:i + 60] + "\n" for i in range(0, len(encoded), 60))
            sha = github_git.blob_sha(repo.path, ref, path)
            entry = self._entry(repo, "file", sha, path, len(data), ref)
            return {**entry, "encoding": "base64", "content": wrapped}
        if kind == "tree" and github_git.resolve(repo.path, ref):
            prefix = f"{path.rstrip('/')}/" if path else ""
            return [self._entry(repo, "dir" if k == "tree" else "file", sha, prefix + name, size, ref)
                    for k, sha, name, size in github_git.list_tree(repo.path, ref, path)]
        return None

    def _entry(self, repo: FakeRepo, kind: str, sha: str, path: str, size: int, ref: str) -> JSON:
        url = f"{self.api}/repos/{repo.full_name}/contents/{path}?ref={ref}"
        git_url = f"{self.api}/repos/{repo.full_name}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        html = f"{self.web}/{repo.full_name}/{'tree' if kind == 'dir' else 'blob'}/{ref}/{path}"
        download = None if kind == "dir" else f"{self.web}/raw/{repo.full_name}/{ref}/{path}"
        return {
            "type": kind, "size": size, "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha, "url": url,
            "git_url": git_url, "html_url": html, "download_url": download,
            "_links": {"self": url, "git": git_url, "html": html},
        }


def pushed_at(repo: FakeRepo) -> datetime:
    """When a ref of `repo` last changed, as GitHub stores it: a stored time, so two reads of an
    unchanged repository render the same body (and the same ETag), whatever the clock says."""
    refs = [repo.path / "packed-refs", *(repo.path / "refs" / "heads").rglob("*")]
    stamps = [path.stat().st_mtime for path in refs if path.is_file()]
    if not stamps:
        return repo.created_at
    return max(repo.created_at, datetime.fromtimestamp(max(stamps), tz=repo.created_at.tzinfo))
