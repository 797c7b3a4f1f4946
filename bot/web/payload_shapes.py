"""Whether a payload has the shape of the event its `X-GitHub-Event` header names.

The signature covers the body only, so a captured body can be sent again under another event
name (a comment's `deleted` delivery as `installation` would read as an uninstall). Each event
the App acts on has fields that say which event a body is (GitHub's own payloads for it always
carry them, and no other event's do): a body must carry its event's own and none of the
others'. An installation event never names a repository. Checked against every recorded
payload of @octokit/webhooks-examples (tests/bot/web/test_webhook_examples.py posts each as
its own event; tests/security/test_webhook_replays.py as every other).
"""

from __future__ import annotations

from typing import Any

# The top-level fields that tell one event's payload from another's: its own (all present)
# and, for the rest, whose they are.
OWN_FIELDS: dict[str, frozenset[str]] = {
    "issues": frozenset({"issue"}),
    "issue_comment": frozenset({"issue", "comment"}),
    "pull_request": frozenset({"pull_request", "number"}),
    "push": frozenset({"ref", "before", "after"}),
    "installation": frozenset({"installation"}),
    "installation_repositories": frozenset({"installation", "repository_selection"}),
    "check_run": frozenset({"check_run"}),
    "check_suite": frozenset({"check_suite"}),
    "status": frozenset({"sha", "state", "context"}),
    "workflow_run": frozenset({"workflow_run"}),
}
MARKERS: dict[str, frozenset[str]] = {  # a field -> the events whose payloads may carry it
    "issue": frozenset({"issues", "issue_comment"}),
    "comment": frozenset({"issue_comment"}),
    "pull_request": frozenset({"pull_request"}),
    "number": frozenset({"pull_request"}),
    "ref": frozenset({"push"}), "pusher": frozenset({"push"}), "commits": frozenset({"push"}),
    "head_commit": frozenset({"push"}), "forced": frozenset({"push"}),
    "check_run": frozenset({"check_run"}), "check_suite": frozenset({"check_suite"}),
    "workflow_run": frozenset({"workflow_run"}), "workflow": frozenset({"workflow_run"}),
    "sha": frozenset({"status"}), "state": frozenset({"status"}), "context": frozenset({"status"}),
    "repositories_added": frozenset({"installation_repositories"}),
    "repositories_removed": frozenset({"installation_repositories"}),
    "repository_selection": frozenset({"installation_repositories"}),
    "repositories": frozenset({"installation"}),
}
ACTIONS: dict[str, frozenset[str]] = {  # the events whose actions end or park jobs
    "installation": frozenset({"created", "deleted", "new_permissions_accepted", "suspend",
                               "unsuspend"}),
    "installation_repositories": frozenset({"added", "removed"}),
}
WITHOUT_REPOSITORY = ("installation", "installation_repositories")


def shape_problem(event_name: str, payload: Any) -> str:
    """Why `payload` cannot be a delivery of `event_name` ("" when it can, or when the App
    does not act on that event)."""
    own = OWN_FIELDS.get(event_name)
    if own is None or not isinstance(payload, dict):
        return ""
    missing = sorted(own - payload.keys())
    if missing:
        return f"a `{event_name}` payload carries `{missing[0]}`; this one does not"
    foreign = sorted(name for name in payload.keys() & MARKERS.keys()
                     if event_name not in MARKERS[name])
    if foreign:
        return f"`{foreign[0]}` belongs to another event's payload, not to `{event_name}`"
    if event_name in WITHOUT_REPOSITORY and "repository" in payload:
        return f"a `{event_name}` payload names no repository; this one does"
    actions = ACTIONS.get(event_name)
    action = payload.get("action")  # untrusted: any JSON value, a list included
    if actions is not None and (not isinstance(action, str) or action not in actions):
        return f"`{event_name}` has no action {str(payload.get('action'))[:40]!r}"
    return ""
