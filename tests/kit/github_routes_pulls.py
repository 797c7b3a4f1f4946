"""REST endpoints of the fake GitHub for pull requests (create with GitHub's 422s, list, get, update)."""

from __future__ import annotations

from tests.kit import github_git
from tests.kit.github_api import REPO, ApiError, Call, Reply, check_text_fields, invalid, paginate, route
from tests.kit.github_model import FakeRepo, PullRequest

# --- Pull requests ----------------------------------------------------------------------------


def refresh_head(repo: FakeRepo, pr: PullRequest) -> PullRequest:
    if pr.state == "open":
        pr.head_sha = github_git.branch_head(repo.path, pr.head_ref) or pr.head_sha
    return pr


@route("POST", REPO + r"/pulls", permissions="pull_requests=write")
def create_pull(call: Call) -> Reply:
    repo, state = call.r, call.state
    head = str(call.field("head", "")).split(":")[-1]
    base = str(call.field("base", ""))
    title = call.field("title")
    if not title:
        raise invalid("title is missing", field_name="title", code="missing_field")
    check_text_fields(call, "PullRequest")
    base_sha = github_git.branch_head(repo.path, base)
    head_sha = github_git.branch_head(repo.path, head)
    if base_sha is None:
        raise invalid(f"base {base} is invalid", field_name="base", code="invalid")
    if head_sha is None:
        raise invalid(f"head {head} is invalid", field_name="head", code="invalid")
    if state.pull_for(repo, head, state="open"):
        raise invalid(f"A pull request already exists for {repo.owner}:{head}.")
    if github_git.commits_between(repo.path, base_sha, head_sha) == 0:
        raise invalid(f"No commits between {base} and {head}")
    draft = bool(call.field("draft", False))
    if draft and not repo.drafts_supported:
        raise invalid("Draft pull requests are not supported in this repository.", field_name="draft")
    now = state.clock()
    number = repo.next_number
    repo.next_number += 1
    pr = PullRequest(state.next_id("issue"), number, title, call.field("body"), state.bot_login, now, now,
                     user_type="Bot", head_ref=head, head_sha=head_sha, base_ref=base, draft=draft)
    repo.issues[number] = pr
    state.effect(f"{repo.full_name}#{number}:pr-opened:{'draft' if draft else 'ready'}")
    return Reply(201, call.render.pull(repo, pr))


@route("GET", REPO + r"/pulls", permissions="pull_requests=read")
def list_pulls(call: Call) -> Reply:
    want = call.query.get("state", "open")
    head = call.query.get("head")
    base = call.query.get("base")
    pulls = [refresh_head(call.r, p) for p in sorted(call.r.pulls.values(), key=lambda p: -p.number)]
    pulls = [p for p in pulls if want == "all" or p.state == want]
    if head:
        owner, _, branch = head.rpartition(":")
        pulls = [p for p in pulls if p.head_ref == branch and owner in ("", call.r.owner)]
    if base:
        pulls = [p for p in pulls if p.base_ref == base]
    rendered = [call.render.pull(call.r, p, simple=True) for p in pulls]
    return paginate(call, rendered, f"/repositories/{call.r.id}/pulls")


def pull_of(call: Call) -> PullRequest:
    pr = call.r.pulls.get(int(call.params["number"]))
    if pr is None:
        raise ApiError(404, "Not Found")
    return refresh_head(call.r, pr)


@route("GET", REPO + r"/pulls/(?P<number>\d+)", permissions="pull_requests=read")
def get_pull(call: Call) -> Reply:
    return Reply(200, call.render.pull(call.r, pull_of(call)))


@route("PATCH", REPO + r"/pulls/(?P<number>\d+)", permissions="pull_requests=write")
def update_pull(call: Call) -> Reply:
    pr, where = pull_of(call), f"{call.r.full_name}#{call.params['number']}"
    check_text_fields(call, "PullRequest")
    for key in ("title", "body"):
        if key in call.data and call.data[key] != getattr(pr, key):
            setattr(pr, key, call.data[key])
            call.state.effect(f"{where}:pr-{key}-updated")
    if "base" in call.data and call.data["base"] != pr.base_ref:
        pr.base_ref = call.data["base"]
        call.state.effect(f"{where}:pr-base-changed:{pr.base_ref}")
    if call.data.get("state") == "closed" and pr.state == "open":
        call.state.close_issue(call.r, pr.number, log=True)
    elif call.data.get("state") == "open" and pr.state == "closed" and not pr.merged:
        pr.state, pr.closed_at = "open", None
        call.state.effect(f"{where}:pr-reopened")
    pr.updated_at = call.state.clock()
    return Reply(200, call.render.pull(call.r, pr))
