"""REST endpoints of the fake GitHub the App calls as itself (a JWT): its installations, as
GitHub lists them (oldest first, paged; suspended ones included with `suspended_at`), and its
webhook deliveries (newest first) with their redelivery (tests/kit/github_hooks.py)."""

from __future__ import annotations

from typing import Any

from tests.kit.github_api import JWT_ONLY, ApiError, Call, Reply, paginate, route


@route("GET", r"/app/installations", auth="jwt", permissions=JWT_ONLY)
def list_installations(call: Call) -> Reply:
    found = sorted(call.state.installations.values(), key=lambda inst: inst.id)
    return paginate(call, [listed(call, call.render.installation(inst)) for inst in found],
                    "/app/installations")


def listed(call: Call, installation: dict[str, Any]) -> dict[str, Any]:
    """The description of this listing types `account` as every field of a user *and* of an
    enterprise (allOf, unlike the single installation's anyOf): the enterprise's required
    fields are added so the answer passes it (clients read `id` and `account.login` only)."""
    account = dict(installation["account"])
    account.setdefault("name", account["login"])
    account.setdefault("slug", account["login"].lower())
    stamp = installation["created_at"]
    account.setdefault("created_at", stamp)
    account.setdefault("updated_at", stamp)
    return {**installation, "account": account}


@route("GET", r"/app/hook/deliveries", auth="jwt", permissions=JWT_ONLY)
def list_hook_deliveries(call: Call) -> Reply:
    """The attempts that have ended (an attempt waiting for its answer is not listed yet),
    newest first, `per_page` at most 100; `status` filters by `status_code` range as GitHub
    does (success: 200-399, failure: 400-599; a connection failure, code 0, is in neither)."""
    per_page = max(1, min(100, int(call.query.get("per_page", 30))))
    wanted = call.query.get("status")
    found = [d for d in reversed(call.state.hooks.deliveries) if d.ended and (
        wanted is None or (wanted == "success" and 200 <= d.status_code < 400)
        or (wanted == "failure" and 400 <= d.status_code < 600))]
    return Reply(200, [d.item() for d in found[:per_page]])


@route("POST", r"/app/hook/deliveries/(?P<did>\d+)/attempts", auth="jwt",
       permissions=JWT_ONLY)
def redeliver_hook_delivery(call: Call) -> Reply:
    if not call.state.hooks.redeliver(int(call.params["did"])):
        raise ApiError(404, "Not Found")
    return Reply(202, {})
