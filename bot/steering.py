"""The facts a steering decision needs, read from GitHub: the sender's repository role, or
membership of the `@org/team` entries of the approvers list (the App's `members: read`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.authz import Decision, decide, team_approvers
from bot.github.client import Installation
from bot.github.errors import ForgeError

log = logging.getLogger(__name__)
TEAM_UNREADABLE = " (team membership could not be read: the App needs the `members: read` permission)"


def steering_decision(client: Installation, repo: str, *, login: str, approvers: Sequence[str],
                      action: str) -> Decision:
    """decide() with the role or the team memberships it needs, asking GitHub only for those."""
    owner, name = repo.split("/", 1)
    if not approvers:
        return decide(login=login, role=client.permission(owner, name, login), approvers=(),
                      action=action)
    if not login or login.lower() in {a.lower() for a in approvers if not a.startswith("@")}:
        return decide(login=login, role="", approvers=approvers, action=action)
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
    decision = decide(login=login, role="", approvers=approvers, action=action,
                      member_of=member_of)
    if unreadable and not decision.allowed:
        return Decision(False, decision.reason + TEAM_UNREADABLE)
    return decision
