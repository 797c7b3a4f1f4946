"""Commits GitHub signs: a local commit re-created through the Git Data API with the
installation token (blobs GitHub lacks, a tree on the parent's tree, the commit, then a
compare-and-set ref update), so GitHub signs it and shows it "Verified".

GitHub signs an App's commit only when the create-commit request names no `author`,
`committer` or `signature`: none is sent, so the App's bot user is author and committer with
GitHub's time, and a person who authored the local commit is credited by a `Co-authored-by:`
trailer instead.

The local objects are the truth: the tree GitHub builds must have the local tree's sha (else
nothing is moved and the job stops with a clear error). Only contents the parents do not hold
at the changed paths are uploaded (looked up at those paths, not in a listing of the whole
tree: a step costs the same in a repository of any size), so a large batch costs one call per
new file content and a base merge none for what the base brought.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from githubkit.exception import RequestFailed

from bot.github.ci import RepositoryCi
from bot.github.client import Installation, response_json
from bot.github.errors import SUSPENDED_WORDS, ForgeError, rate_limit
from bot.github.git_objects import (
    EMPTY_TREE,
    LocalCommit,
    TreeChange,
    blob_contents,
    credited,
    known_blobs,
    oversized_blobs,
    read_commit,
    touches_workflows,
    tree_changes,
)
from jobs.adapters.workspace import Repository, WithdrawRefusedError
from jobs.basics.errors import WORKFLOW_PERMISSION, RetryClass, WorkspaceError
from jobs.basics.github_limits import BLOB_BYTES

WORKFLOWS_REFUSED = "without `workflows` permission"  # GitHub's words, pushes and API alike
INLINE_BYTES = 1 << 20  # UTF-8 text up to this much per commit rides in the tree request


def _entry(change: TreeChange, inline: dict[str, str]) -> dict[str, Any]:
    """One tree entry: the file's text inline, else the sha of a blob GitHub has (None:
    deleted)."""
    entry: dict[str, Any] = {"path": change.path, "mode": change.mode, "type": change.kind}
    if change.sha is not None and change.sha in inline:
        entry["content"] = inline[change.sha]
    else:
        entry["sha"] = change.sha
    return entry


class ApiCommits:
    """Lands local commits on one repository's branches through the Git Data API."""

    def __init__(self, client: Installation, full_name: str) -> None:
        self.client = client
        self.owner, self.name = full_name.split("/", 1)
        self.calls = 0  # API calls made (the benchmark reads it)

    def _api(self, action: Callable[[Any], Any]) -> Any:
        self.calls += 1
        return self.client._call(lambda gh: response_json(action(gh)))

    def land(self, repo: Repository, branch: str, new: str, old: str) -> str:
        """Create commit `new` (whose first parent is the branch's tip `old`) on GitHub and move
        `branch` to it by fast-forward only; the sha GitHub gave it."""
        commit = read_commit(repo, new)
        tree = self._create_tree(repo, commit)
        if tree != commit.tree:
            raise WorkspaceError(
                f"GitHub built tree {tree[:7]} for the commit, not the validated tree "
                f"{commit.tree[:7]}; nothing was moved", code="api_tree_mismatch",
                retry_class=RetryClass.NEEDS_HUMAN,
                hint="set `commit_via: git` in .github/stepwise.yml to push with git instead, "
                     "and report this (file modes or paths GitHub stores differently)")
        # No author, committer or signature: GitHub signs only such a commit (DESIGN.md).
        body: dict[str, Any] = {"message": credited(repo, commit), "tree": tree,
                                "parents": list(commit.parents)}
        created = self._api(lambda gh: gh.git.create_commit(self.owner, self.name, data=body))
        sha = str(created["sha"])
        self._move(branch, sha, old)
        return sha

    def signed_by_app(self, sha: str, email: str) -> bool:
        """Whether GitHub signed commit `sha` as made by the App's bot user (`email`): what
        an API commit without a custom author is, and what nobody else's push can be."""
        commit = self._api(lambda gh: gh.git.get_commit(self.owner, self.name, sha))
        verification = commit.get("verification") or {}
        author = commit.get("author") or {}
        return bool(verification.get("verified")) and author.get("email") == email

    def _create_tree(self, repo: Repository, commit: LocalCommit) -> str:
        base = repo.git("rev-parse", f"{commit.parents[0]}^{{tree}}").strip() \
            if commit.parents else EMPTY_TREE
        changes = tree_changes(repo, base, commit.tree)
        if not changes:
            return base
        have = known_blobs(repo, commit.parents, changes)
        upload = sorted({c.sha for c in changes
                         if c.kind == "blob" and c.sha is not None and c.sha not in have})
        too_large = oversized_blobs(repo, changes, upload)
        if too_large:  # refused before anything is sent, rather than after minutes of upload
            listed = ", ".join(f"{path} ({size / 2**20:.1f} MiB)" for path, size in too_large[:5])
            raise WorkspaceError(
                f"the commit holds files over GitHub's limit of {BLOB_BYTES // 2**20} MiB a "
                f"file: {listed}; nothing was sent", code="blob_too_large",
                retry_class=RetryClass.NEEDS_HUMAN,
                hint="keep such files out of the batch (exclude them from the job's paths), or "
                     "store them with Git LFS")
        inline: dict[str, str] = {}  # UTF-8 text goes in the tree request itself
        budget = INLINE_BYTES
        for sha, data in blob_contents(repo, upload).items():
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None and "\x00" not in text and len(data) <= budget:
                inline[sha], budget = text, budget - len(data)
                continue
            self._upload_blob(sha, data)
        entries = [_entry(c, inline) for c in changes]
        tree_body: dict[str, Any] = {"tree": entries}
        if commit.parents:
            tree_body["base_tree"] = base
        workflows = [c.path for c in changes if touches_workflows(c.path)]
        status, created = self._tree(tree_body, refusable=bool(workflows))
        if status:  # GitHub refuses an App without `workflows: write` here, not at the ref
            raise WorkspaceError(
                f"GitHub refused the commit's tree ({status} {created.get('message', '')}): it "
                f"creates or changes workflow files ({', '.join(workflows[:5])}), and the App "
                "has no `workflows: write` permission", code=WORKFLOW_PERMISSION,
                retry_class=RetryClass.NEEDS_HUMAN,
                hint="an owner can grant the App `workflows: write` in its installation "
                     "settings, or someone makes the workflow change by hand")
        return str(created["sha"])

    def _tree(self, body: dict[str, Any], *, refusable: bool) -> tuple[int, dict[str, Any]]:
        """POST git/trees: (0, the tree), or, when `refusable`, GitHub's 403/404 and its answer
        (what it says to an App lacking `workflows: write` for a tree touching workflows)."""
        self.calls += 1

        def run(gh: Any) -> tuple[int, dict[str, Any]]:
            try:
                return 0, response_json(gh.git.create_tree(self.owner, self.name, data=body))
            except RequestFailed as exc:
                if not refusable or exc.response.status_code not in (403, 404) or \
                        rate_limit(exc, now=time.time()) is not None or \
                        SUSPENDED_WORDS in exc.response.text.lower():
                    raise
                try:
                    answer = exc.response.json()
                except ValueError:
                    answer = {"message": exc.response.text[:300]}
                return exc.response.status_code, answer if isinstance(answer, dict) else {}

        result: tuple[int, dict[str, Any]] = self.client._call(run)
        return result

    def _upload_blob(self, sha: str, data: bytes) -> None:
        blob = {"content": base64.b64encode(data).decode(), "encoding": "base64"}
        answer = self._api(lambda gh: gh.git.create_blob(self.owner, self.name, data=blob))
        if answer.get("sha") != sha:
            raise WorkspaceError(f"GitHub stored blob {sha[:7]} as {str(answer.get('sha'))[:7]}",
                                 code="api_tree_mismatch", retry_class=RetryClass.NEEDS_HUMAN,
                                 hint="set `commit_via: git` in .github/stepwise.yml")

    def _move(self, branch: str, sha: str, old: str) -> None:
        """Fast-forward `branch` to `sha` (created when GitHub has no such branch yet)."""
        status, message = self._refusable(lambda gh: gh.git.update_ref(
            self.owner, self.name, f"heads/{branch}", data={"sha": sha, "force": False}))
        if status and "does not exist" in message.lower():
            status, message = self._refusable(lambda gh: gh.git.create_ref(
                self.owner, self.name, data={"ref": f"refs/heads/{branch}", "sha": sha}))
        if status:
            raise refusal(branch, status, message)

    def withdraw(self, branch: str, candidate: str, to: str) -> None:
        """Move `branch` back from our own CI-rejected `candidate` to `to` (its parent) through
        the API: the ref's current sha is compared first, and only then forced (`force: true`),
        so a branch someone moved on is never rewritten. (GitHub has no compare-and-set for a
        forced ref update; the window between the read and the update is one request.)"""
        current = self._api(lambda gh: gh.git.get_ref(self.owner, self.name, f"heads/{branch}"))
        at = str((current.get("object") or {}).get("sha", "")) if isinstance(current, dict) else ""
        if at != candidate:
            raise WithdrawRefusedError(
                f"`{branch}` is no longer at `{candidate[:7]}` on GitHub (it is at `{at[:7]}`), "
                "so it is not withdrawn", hint="someone pushed on top of it; Stepwise never "
                "rewrites their work")
        status, message = self._refusable(lambda gh: gh.git.update_ref(
            self.owner, self.name, f"heads/{branch}", data={"sha": to, "force": True}))
        if status:
            raise refusal(branch, status, message)

    def _refusable(self, action: Callable[[Any], Any]) -> tuple[int, str]:
        """Run a ref update; (0, "") when done, else GitHub's status and message for a refusal
        (403/409/422: the answer will not change by asking again)."""
        self.calls += 1

        def run(gh: Any) -> tuple[int, str]:
            try:
                action(gh)
            except RequestFailed as exc:
                if exc.response.status_code not in (403, 409, 422) or \
                        SUSPENDED_WORDS in exc.response.text.lower():  # parks the job, below
                    raise
                try:
                    message = str(exc.response.json().get("message", ""))
                except ValueError:
                    message = exc.response.text
                return exc.response.status_code, message or exc.response.text
            return 0, ""

        result: tuple[int, str] = self.client._call(run)
        return result


def refusal(branch: str, status: int, message: str) -> WorkspaceError:
    """A refused ref update as the engine knows it: the App may not change workflow files,
    someone pushed (not a fast forward), or GitHub refuses for a reason a human must see."""
    if WORKFLOWS_REFUSED.lower() in message.lower():
        return WorkspaceError(
            f"GitHub refused to move `{branch}`: {message[-300:]}", code=WORKFLOW_PERMISSION,
            retry_class=RetryClass.NEEDS_HUMAN,
            hint="the App has no `workflows: write` permission: an owner can grant it in the "
                 "App's installation settings, or someone merges by hand")
    if "fast forward" in message.lower() or "already exists" in message.lower():
        return WorkspaceError(
            f"moving `{branch}` was refused: {message[-300:]}", code="push_rejected",
            retry_class=RetryClass.AUTO_RETRY,
            hint="someone may have pushed to the branch; the job re-reads it and continues")
    return WorkspaceError(f"GitHub answered {status} to moving `{branch}`: {message[-300:]}",
                          code=f"github_{status}", retry_class=RetryClass.NEEDS_HUMAN,
                          hint="check the App's permissions and the branch's rules on GitHub")


SIGNATURES_REQUIRED = (
    "`{branch}` requires signed commits, and `commit_via: git` in .github/stepwise.yml pushes "
    "unsigned ones: the pull request could never be merged")
SIGNATURES_FIX = ("remove `commit_via: git` (the default, `api`, makes commits GitHub signs), "
                  "then label the issue again")


def requires_signed_commits(client: Installation, full_name: str, branch: str) -> bool:
    """Whether `branch` accepts only signed commits: a ruleset's `required_signatures` rule
    (readable with `metadata: read`) or branch protection's (readable with
    `administration: read`, which app.yml asks for; an installation that has not accepted it
    gets 403 there, which counts as "no")."""
    owner, name = full_name.split("/", 1)
    rules = RepositoryCi(client, full_name)._branch_rules(branch)
    if any(rule.get("type") == "required_signatures" for rule in rules):
        return True
    try:
        data = client._call(lambda gh: response_json(gh.repos.get_commit_signature_protection(
            owner, name, branch)), missing={})
    except ForgeError as exc:
        if exc.evidence.get("status") == 403:
            return False
        raise
    return isinstance(data, dict) and bool(data.get("enabled"))
