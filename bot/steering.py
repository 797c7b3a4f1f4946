"""The facts a steering decision needs, read from GitHub: the sender's repository role (asked
of approvers too: they need write), membership of the `@org/team` entries of the approvers
list (the App's `members: read`), and the account ids the approvers list names
(`resolve_approvers`, when a job starts)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence

from bot.authz import Decision, decide, listed_approver, team_approvers
from bot.github.client import Installation
from bot.github.errors import ForgeError

log = logging.getLogger(__name__)
TEAM_UNREADABLE = " (team membership could not be read: the App needs the `members: read` permission)"


def resolve_approvers(client: Installation, approvers: Sequence[str]) -> dict[str, int]:
    """The account id of each approver login (lower case) as GitHub has it now; 0 for a login
    no account holds. Teams are not resolved here: membership is asked at each decision, by
    the sender's current login, which names the sender's own account."""
    return {who.lower(): client.user_id(who) for who in approvers if not who.startswith("@")}


def steering_decision(client: Installation, repo: str, *, login: str, approvers: Sequence[str],
                      action: str, actor_id: int = 0,
                      approver_ids: Mapping[str, int] | None = None) -> Decision:
    """decide() with the role or the team memberships it needs, asking GitHub only for those.
    `actor_id` is the sender's account id (from the webhook); `approver_ids` the ids the list
    was resolved to when the job started (empty: a job from before, matched by login)."""
    owner, name = repo.split("/", 1)
    if not approvers:
        return decide(login=login, role=client.permission(owner, name, login), approvers=(),
                      action=action)
    if approver_ids and not actor_id and login:
        actor_id = client.user_id(login)  # a delivery without the sender's id
    judge = functools.partial(decide, login=login, approvers=approvers, action=action,
                              actor_id=actor_id, approver_ids=approver_ids)
    if not login:
        return judge(role="")
    if listed_approver(login, approvers, actor_id=actor_id, approver_ids=approver_ids):
        return judge(role=client.permission(owner, name, login))
    member_of: list[str] = []
    unreadable = False
    for team in team_approvers(approvers):
        org, _, slug = team.removeprefix("@").partition("/")
        try:
            if client.is_team_member(org, slug, login):
                member_of.append(team)
                break
        except ForgeError as exc:
            unreadable = True
            log.warning("could not read a team's membership", extra={"team": team,
                                                                     "error": exc.message})
    role = client.permission(owner, name, login) if member_of else ""
    decision = judge(role=role, member_of=member_of)
    if unreadable and not decision.allowed:
        return Decision(False, decision.reason + TEAM_UNREADABLE)
    return decision
