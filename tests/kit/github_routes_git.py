"""REST endpoints of the fake GitHub for the Git Data API (blobs, trees with `base_tree`, commits
GitHub signs, refs updated only by fast-forward unless forced), a commit with its `verification`,
the required-signatures rule of branch protection and merging a pull request (405 when the
base requires signed commits and one is not verified). Writes need `contents: write`; a tree
with an entry under `.github/workflows/` (403 "Resource not accessible by integration", where
GitHub refuses it) and a ref update that creates or changes a workflow file also need
`workflows: write`."""

from __future__ import annotations

import binascii
from datetime import UTC, datetime
from typing import Any

from tests.kit import github_git
from tests.kit import github_git_data as data
from tests.kit.github_api import BLOB_MAX_BYTES, REPO, ApiError, Call, Reply, route
from tests.kit.github_mergeability import requires_signatures, unverified
from tests.kit.github_model import FakeRepo, Token
from tests.kit.github_permissions import NOT_ACCESSIBLE
from tests.kit.github_render import ts
from tests.kit.github_state import GitHubState

CONTENTS_READ = "contents=read"
CONTENTS_WRITE = "contents=write"
SHA = r"(?P<sha>[0-9a-fA-F]{40})"
ZERO = "0" * 40


def _api(call: Call) -> str:
    return f"{call.render.api}/repos/{call.r.full_name}"


def _invalid(message: str) -> ApiError:
    return ApiError(422, message)


def _parse_date(text: Any, default: datetime) -> datetime:
    if not text:
        return default
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise _invalid(f"Invalid request.\n\n{text!r} is not a valid date-time.") from None


# --- blobs and trees ------------------------------------------------------------------------


@route("POST", REPO + r"/git/blobs", permissions=CONTENTS_WRITE)
def create_blob(call: Call) -> Reply:
    content = call.field("content")
    if not isinstance(content, str):
        raise _invalid("Invalid request.\n\n\"content\" wasn't supplied.")
    try:
        raw = data.decode_content(content, str(call.field("encoding") or "utf-8"))
    except (binascii.Error, ValueError) as exc:
        raise _invalid(f"Invalid request.\n\n{exc}") from None
    if len(raw) > BLOB_MAX_BYTES:
        raise _invalid(f"Invalid request.\n\nBlob is too large ({len(raw)} bytes; the maximum "
                       f"is {BLOB_MAX_BYTES} bytes)")
    sha = data.write_blob(call.r.path, raw)
    call.state.effect(f"{call.r.full_name}:blob-created:{sha[:7]}")
    return Reply(201, {"sha": sha, "url": f"{_api(call)}/git/blobs/{sha}"})


@route("POST", REPO + r"/git/trees", permissions=CONTENTS_WRITE)
def create_tree(call: Call) -> Reply:
    repo = call.r.path
    base = call.field("base_tree")
    if base is not None and data.object_kind(repo, str(base)) != "tree":
        raise _invalid("base_tree is not a valid tree oid")  # GitHub: 422 GitRPC::BadObjectState
    entries = call.field("tree")
    if not isinstance(entries, list):
        raise _invalid("Invalid request.\n\n\"tree\" wasn't supplied.")
    if not _may_change_workflows(call.token) and any(
            isinstance(e, dict) and data.touches_workflows(str(e.get("path", ""))) for e in entries):
        # GitHub refuses here, not at the ref update, an App without `workflows: write`
        raise ApiError(403, NOT_ACCESSIBLE,
                       headers={"X-Accepted-GitHub-Permissions": "contents=write,workflows=write"})
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("path") or not entry.get("mode"):
            raise _invalid("Invalid tree info")
        sha = entry.get("sha")
        if sha is not None and "content" not in entry:
            kind = data.object_kind(repo, str(sha))
            wanted = {"blob": "blob", "tree": "tree", "commit": "commit"}.get(str(entry.get("type")))
            if entry.get("type") != "commit" and kind != wanted:
                raise _invalid(f"tree.sha {sha} is not a valid {entry.get('type', 'blob')}")
    tree = data.build_tree(repo, None if base is None else str(base), entries)
    return Reply(201, {"sha": tree, "url": f"{_api(call)}/git/trees/{tree}", "tree": [],
                       "truncated": False})


# --- commits ------------------------------------------------------------------------------------


def verification(call: Call, sha: str) -> dict[str, Any]:
    """GitHub's verdict on a commit: verified when GitHub signed it (made through the API with
    no custom author, committer or signature, or by its merge button), `unsigned` when it was
    pushed or made with a custom author, `unknown_key` for a signature GitHub cannot check."""
    if sha in call.state.signed_commits:
        return {"verified": True, "reason": "valid", "signature": data.FAKE_SIGNATURE,
                "payload": f"tree {sha}\n", "verified_at": ts(call.state.signed_commits[sha])}
    signature = data.commit_fields(call.r.path, sha).get("gpgsig")
    return {"verified": False, "reason": "unknown_key" if signature else "unsigned",
            "signature": signature, "payload": None, "verified_at": None}


def git_commit_body(call: Call, sha: str) -> dict[str, Any]:
    fields = data.commit_fields(call.r.path, sha)
    api = _api(call)

    def person(key: str) -> dict[str, Any]:
        name, email, stamp = fields[key]
        return {"name": name, "email": email,
                "date": ts(datetime.fromtimestamp(stamp, UTC))}

    return {
        "sha": sha, "node_id": f"C_fake{sha[:12]}", "url": f"{api}/git/commits/{sha}",
        "html_url": f"{call.render.web}/{call.r.full_name}/commit/{sha}",
        "author": person("author"), "committer": person("committer"),
        "message": fields["message"],
        "tree": {"sha": fields["tree"], "url": f"{api}/git/trees/{fields['tree']}"},
        "parents": [{"sha": p, "url": f"{api}/git/commits/{p}",
                     "html_url": f"{call.render.web}/{call.r.full_name}/commit/{p}"}
                    for p in fields["parents"]],
        "verification": verification(call, sha),
    }


def _person(given: Any, default: tuple[str, str]) -> tuple[str, str]:
    if not isinstance(given, dict):
        return default
    if not given.get("name") or not given.get("email"):
        raise _invalid("Invalid request.\n\n\"name\" and \"email\" are required.")
    return str(given["name"]), str(given["email"])


@route("POST", REPO + r"/git/commits", permissions=CONTENTS_WRITE)
def create_commit(call: Call) -> Reply:
    repo = call.r.path
    message, tree = call.field("message"), call.field("tree")
    parents = call.field("parents", [])
    if not isinstance(message, str) or not isinstance(tree, str):
        raise _invalid("Invalid request.\n\n\"message\" and \"tree\" are required.")
    if data.object_kind(repo, tree) != "tree":
        raise _invalid("Tree SHA does not exist")
    if not isinstance(parents, list) or any(data.object_kind(repo, str(p)) != "commit"
                                            for p in parents):
        raise _invalid("Parent SHA does not exist or is not a commit object")
    now = call.state.clock()
    author, committer = call.field("author"), call.field("committer")
    signature = call.field("signature")
    bot = call.state.bot_login
    domain = getattr(call.state, "noreply_domain", "users.noreply.github.com")
    bot_person = (bot, f"{call.state.user_id(bot)}+{bot}@{domain}")
    if not author and not committer and not signature:  # the only commits GitHub signs
        sha = data.signed_commit(repo, tree=tree, parents=[str(p) for p in parents],
                                 message=message, author=bot_person, when=now, committed=now)
        call.state.signed_commits[sha] = now
    else:  # as asked, unsigned (a custom signature is kept but GitHub cannot verify it)
        who = _person(author or committer, bot_person)
        by = _person(committer, who) if committer else who
        sha = data.unsigned_commit(
            repo, tree=tree, parents=[str(p) for p in parents], message=message,
            author=who, when=_parse_date((author or committer or {}).get("date"), now),
            committer=by, committed=_parse_date((committer or author or {}).get("date"), now),
            signature=str(signature) if signature else None)
    call.state.effect(f"{call.r.full_name}:commit-created:{sha[:7]}")
    return Reply(201, git_commit_body(call, sha))


@route("GET", REPO + r"/git/commits/" + SHA, permissions=CONTENTS_READ)
def get_git_commit(call: Call) -> Reply:
    if data.object_kind(call.r.path, call.params["sha"]) != "commit":
        raise ApiError(404, "Not Found")
    return Reply(200, git_commit_body(call, call.params["sha"]))


@route("GET", REPO + r"/commits/(?P<ref>[^/]+)", permissions=CONTENTS_READ)
def get_commit(call: Call) -> Reply:
    sha = github_git.resolve(call.r.path, call.params["ref"])
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {call.params['ref']}")
    body = git_commit_body(call, sha)
    api = _api(call)
    commit = {key: body[key] for key in ("author", "committer", "message", "tree", "url",
                                         "verification")}
    return Reply(200, {
        "sha": sha, "node_id": body["node_id"], "url": f"{api}/commits/{sha}",
        "html_url": body["html_url"], "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {**commit, "comment_count": 0}, "author": None, "committer": None,
        "parents": body["parents"], "files": []})


# --- refs ---------------------------------------------------------------------------------------


def _ref_body(call: Call, branch: str, sha: str) -> dict[str, Any]:
    return {"ref": f"refs/heads/{branch}", "node_id": f"REF_fake{sha[:8]}",
            "url": f"{_api(call)}/git/refs/heads/{branch}",
            "object": {"type": "commit", "sha": sha, "url": f"{_api(call)}/git/commits/{sha}"}}


def check_workflows(call: Call, repo: FakeRepo, old: str | None, new: str) -> None:
    """GitHub's refusal when an installation without `workflows: write` moves a ref so that a
    workflow file is created or changed (compared with the ref's old value, or the default
    branch for a new ref)."""
    if _may_change_workflows(call.token):
        return
    start = old or github_git.branch_head(repo.path, repo.default_branch)
    path = data.changed_workflow(repo.path, start, new)
    if path is not None:
        raise ApiError(422, data.workflow_refusal(path))


def _may_change_workflows(token: Token | None) -> bool:
    return token is None or token.permissions.get("workflows") == "write"


def _move(call: Call, branch: str, sha: str, old: str | None) -> None:
    repo = call.r
    if data.object_kind(repo.path, sha) != "commit":
        raise _invalid("Object does not exist")
    check_workflows(call, repo, old, sha)
    github_git.git(repo.path, "update-ref", f"refs/heads/{branch}", sha, old or ZERO)
    call.state.effect(f"{repo.full_name}:ref-updated:{branch}:{sha[:7]}")


@route("GET", REPO + r"/git/ref/heads/(?P<branch>.+)", permissions=CONTENTS_READ)
def get_ref(call: Call) -> Reply:
    sha = github_git.branch_head(call.r.path, call.params["branch"])
    if sha is None:
        raise ApiError(404, "Not Found")
    return Reply(200, _ref_body(call, call.params["branch"], sha))


@route("POST", REPO + r"/git/refs", permissions=CONTENTS_WRITE)
def create_ref(call: Call) -> Reply:
    ref, sha = str(call.field("ref") or ""), str(call.field("sha") or "")
    if not ref.startswith("refs/heads/") or ref.count("/") < 2:
        raise _invalid("Reference name is not well-formed (the fake serves refs/heads/ only)")
    branch = ref.removeprefix("refs/heads/")
    if github_git.branch_head(call.r.path, branch) is not None:
        raise _invalid("Reference already exists")
    _move(call, branch, sha, None)
    return Reply(201, _ref_body(call, branch, sha))


@route("PATCH", REPO + r"/git/refs/heads/(?P<branch>.+)", permissions=CONTENTS_WRITE)
def update_ref(call: Call) -> Reply:
    branch, sha = call.params["branch"], str(call.field("sha") or "")
    old = github_git.branch_head(call.r.path, branch)
    if old is None:
        raise _invalid("Reference does not exist")
    if data.object_kind(call.r.path, sha) != "commit":
        raise _invalid("Object does not exist")
    if not call.field("force", False) and not data.is_ancestor(call.r.path, old, sha):
        raise _invalid("Update is not a fast forward")
    _move(call, branch, sha, old)
    return Reply(200, _ref_body(call, branch, sha))


# --- signatures required, and merging ----------------------------------------------------------


@route("GET", REPO + r"/branches/(?P<branch>.+)/protection/required_signatures",
       permissions="administration=read")
def get_required_signatures(call: Call) -> Reply:
    branch = call.params["branch"]
    if branch not in call.r.ci.signed_branches:
        raise ApiError(404, "Branch not protected")
    url = f"{_api(call)}/branches/{branch}/protection/required_signatures"
    return Reply(200, {"url": url, "enabled": True})


@route("PUT", REPO + r"/pulls/(?P<number>\d+)/merge", permissions=CONTENTS_WRITE)
def merge_pull(call: Call) -> Reply:
    repo = call.r
    pr = repo.pulls.get(int(call.params["number"]))
    if pr is None:
        raise ApiError(404, "Not Found")
    if pr.state != "open":
        raise ApiError(405, "Pull Request is not mergeable")
    if pr.draft:
        raise ApiError(405, "Pull Request is still a draft")
    head = github_git.branch_head(repo.path, pr.head_ref)
    base = github_git.branch_head(repo.path, pr.base_ref)
    if call.field("sha") and call.field("sha") != head:
        raise ApiError(409, "Head branch was modified. Review and try the merge again.")
    if head and base and requires_signatures(repo, pr.base_ref) and \
            unverified(call.state, repo, base, head):
        raise ApiError(405, "Commits must have verified signatures.")
    method = str(call.field("merge_method") or "merge")
    sha = call.state.merge_pull(repo, pr.number, method=method, user=call.state.bot_login)
    call.state.signed_commits[sha] = call.state.clock()  # GitHub signs what its merge button writes
    call.state.effect(f"{repo.full_name}#{pr.number}:pr-merged:{method}")
    return Reply(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


def update_branch(state: GitHubState, repo: FakeRepo, number: int) -> str:
    """GitHub's "Update branch" button: the base merged into the pull request's head branch in
    a merge commit GitHub signs (so a base requiring signed commits still accepts the PR)."""
    with state.lock:
        pr = repo.pulls[number]
        head = github_git.branch_head(repo.path, pr.head_ref)
        base = github_git.branch_head(repo.path, pr.base_ref)
        assert head is not None and base is not None
        tree = github_git.git_text(repo.path, "merge-tree", "--write-tree", head,
                                   base).splitlines()[0]
        now = state.clock()
        sha = data.signed_commit(repo.path, tree=tree, parents=[head, base],
                                 message=f"Merge branch '{pr.base_ref}' into {pr.head_ref}\n",
                                 author=("Maria", "maria@example.invalid"), when=now,
                                 committed=now)
        github_git.git(repo.path, "update-ref", f"refs/heads/{pr.head_ref}", sha, head)
        state.signed_commits[sha] = state.clock()
        state.effect(f"{repo.full_name}#{number}:branch-updated:{sha[:7]}")
        return sha

