"""REST endpoints of the fake GitHub for commit statuses (create, list, combined status) and what a
branch requires: `GET /branches/{branch}` (its protection's required status checks; `strict`,
"require branches to be up to date", only for a token with `administration: read`), the
protection endpoint itself (`administration: read`) and `GET /rules/branches/{branch}`
(rulesets; `metadata: read`)."""

from __future__ import annotations

from typing import Any

from tests.kit import github_ci_render as shapes
from tests.kit import github_git
from tests.kit.github_api import REPO, ApiError, Call, Reply, paginate, route
from tests.kit.github_ci_model import RequiredChecks
from tests.kit.github_ci_ops import add_status, combined_state, latest_per_context, resolve_sha
from tests.kit.github_permissions import missing_permission
from tests.kit.github_routes_checks import paged

STATUSES_READ = "statuses=read"
STATUSES_WRITE = "statuses=write"


@route("POST", REPO + r"/statuses/(?P<sha>[0-9a-fA-F]{40})", permissions=STATUSES_WRITE)
def create_status(call: Call) -> Reply:
    sha = resolve_sha(call.r, call.params["sha"])
    status = add_status(call.state, call.r, sha, state_name=str(call.field("state", "")),
                        context=str(call.field("context") or "default"), creator=call.state.bot_login,
                        target_url=call.field("target_url"), description=call.field("description"))
    call.state.effect(f"{call.r.full_name}@{sha[:7]}:status:{status.context}:{status.state}")
    return Reply(201, shapes.commit_status(call.render, call.r, status))


@route("GET", REPO + r"/commits/(?P<ref>[^/]+)/statuses", permissions=STATUSES_READ)
def list_statuses(call: Call) -> Reply:
    sha = resolve_sha(call.r, call.params["ref"])
    items = [shapes.commit_status(call.render, call.r, s) for s in call.r.ci.statuses_on(sha)]
    return paginate(call, items, f"/repositories/{call.r.id}/commits/{sha}/statuses")


@route("GET", REPO + r"/commits/(?P<ref>[^/]+)/status", permissions=STATUSES_READ)
def combined_status(call: Call) -> Reply:
    sha = resolve_sha(call.r, call.params["ref"])
    latest = latest_per_context(call.r.ci.statuses_on(sha))
    items = [shapes.commit_status(call.render, call.r, s) for s in latest]
    reply = paged(call, items, f"/repositories/{call.r.id}/commits/{sha}/status", "statuses")
    api = f"{call.render.api}/repos/{call.r.full_name}"
    reply.body.update(state=combined_state(latest), sha=sha, repository=call.render.repository(call.r),
                      commit_url=f"{api}/commits/{sha}", url=f"{api}/commits/{sha}/status")
    return reply


def required_checks_body(call: Call, branch: str, required: RequiredChecks) -> dict[str, object]:
    url = f"{call.render.api}/repos/{call.r.full_name}/branches/{branch}/protection/required_status_checks"
    return {"url": url, "strict": required.strict, "contexts": list(required.contexts),
            "contexts_url": url + "/contexts", "enforcement_level": "non_admins",
            "checks": [{"context": c, "app_id": required.app_ids.get(c)} for c in required.contexts]}


@route("GET", REPO + r"/branches/(?P<branch>(?!.*/protection/).+)", permissions="contents=read")
def get_branch(call: Call) -> Reply:
    branch = call.params["branch"]
    sha = github_git.branch_head(call.r.path, branch)
    if sha is None:
        raise ApiError(404, "Branch not found")
    required = call.r.ci.protection.get(branch)
    api = f"{call.render.api}/repos/{call.r.full_name}"
    checks: dict[str, Any] = {
        "enforcement_level": "non_admins" if required else "off",
        "contexts": list(required.contexts) if required else [],
        "checks": [{"context": c, "app_id": required.app_ids.get(c)}
                   for c in (required.contexts if required else [])]}
    if call.token is None or not missing_permission(call.token.permissions, "administration=read"):
        checks["strict"] = required.strict if required else False  # GitHub shows it to admins only
    protection = {"enabled": required is not None, "required_status_checks": checks}
    return Reply(200, {
        "name": branch, "commit": branch_commit(call, sha),
        "_links": {"self": f"{api}/branches/{branch}", "html": f"{call.render.web}/{call.r.full_name}"
                   f"/tree/{branch}"},
        "protected": required is not None, "protection": protection,
        "protection_url": f"{api}/branches/{branch}/protection"})


def branch_commit(call: Call, sha: str) -> dict[str, Any]:
    """The branch's head commit as GitHub's `commit` schema has it."""
    api, web = f"{call.render.api}/repos/{call.r.full_name}", f"{call.render.web}/{call.r.full_name}"
    raw = github_git.git_text(call.r.path, "show", "-s", "--format=%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn"
                              "%x1f%ce%x1f%cI%x1f%B", sha)
    tree, parents, a_name, a_mail, a_date, c_name, c_mail, c_date, message = raw.split("\x1f", 8)
    return {
        "sha": sha, "node_id": f"C_{sha[:20]}", "url": f"{api}/commits/{sha}",
        "html_url": f"{web}/commit/{sha}", "comments_url": f"{api}/commits/{sha}/comments",
        "commit": {"url": f"{api}/git/commits/{sha}", "message": message.rstrip("\n"), "comment_count": 0,
                   "author": {"name": a_name, "email": a_mail, "date": a_date},
                   "committer": {"name": c_name, "email": c_mail, "date": c_date},
                   "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"}},
        "author": None, "committer": None,
        "parents": [{"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                    for p in parents.split()],
    }


@route("GET", REPO + r"/branches/(?P<branch>.+)/protection/required_status_checks",
       permissions="administration=read")
def get_required_status_checks(call: Call) -> Reply:
    branch = call.params["branch"]
    required = call.r.ci.protection.get(branch)
    if required is None:
        raise ApiError(404, "Branch not protected")
    return Reply(200, required_checks_body(call, branch, required))


@route("GET", REPO + r"/rules/branches/(?P<branch>.+)", permissions="metadata=read")
def rules_for_branch(call: Call) -> Reply:
    branch = call.params["branch"]
    rules = []
    for ruleset in call.r.ci.rulesets:
        targets = {call.r.default_branch if b == "~DEFAULT_BRANCH" else b for b in ruleset.branches}
        if ruleset.enforcement != "active" or branch not in targets:
            continue
        rules.append({"type": "required_status_checks", "ruleset_source_type": "Repository",
                      "ruleset_source": call.r.full_name, "ruleset_id": ruleset.id,
                      "parameters": {"strict_required_status_checks_policy": ruleset.strict,
                                     "do_not_enforce_on_create": False,
                                     "required_status_checks": [{"context": c} for c in ruleset.required]}})
        if ruleset.required_signatures:
            rules.append({"type": "required_signatures", "ruleset_source_type": "Repository",
                          "ruleset_source": call.r.full_name, "ruleset_id": ruleset.id})
    return paginate(call, rules, f"/repositories/{call.r.id}/rules/branches/{branch}")
