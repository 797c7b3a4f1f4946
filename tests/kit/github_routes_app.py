"""REST endpoints of the fake GitHub the App calls as itself (a JWT): its installations, as
GitHub lists them (oldest first, paged; suspended ones included with `suspended_at`)."""

from __future__ import annotations

from typing import Any

from tests.kit.github_api import JWT_ONLY, Call, Reply, paginate, route


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
