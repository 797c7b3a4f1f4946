"""Who may start and steer a job: one decision, with its reason."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

STEERING_ROLES = frozenset({"admin", "maintain", "write"})
BASIC_ROLES = ("admin", "maintain", "write", "triage", "read")
# A custom repository role inherits one of these; GitHub shows it in the user's permission flags.
ROLE_FLAGS = (("admin", "admin"), ("maintain", "maintain"), ("push", "write"), ("triage", "triage"),
              ("pull", "read"))


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def team_approvers(approvers: Sequence[str]) -> list[str]:
    """The `@org/team` entries of an approvers list."""
    return [a for a in approvers if a.startswith("@") and "/" in a]


def listed_approver(login: str, approvers: Sequence[str], *, actor_id: int = 0,
                    approver_ids: Mapping[str, int] | None = None) -> bool:
    """Whether the sender is one of the listed approver accounts: by account id once the list
    was resolved (`approver_ids`, login -> id when the job started), so a renamed approver
    still counts and a new account that took a freed login does not; by login before."""
    if approver_ids:
        return bool(actor_id) and actor_id in {i for i in approver_ids.values() if i}
    return login.lower() in {a.lower() for a in approvers if not a.startswith("@")}


def decide(*, login: str, role: str, approvers: Sequence[str], action: str,
           member_of: Collection[str] = (), actor_id: int = 0,
           approver_ids: Mapping[str, int] | None = None) -> Decision:
    """May `login` (account `actor_id`, repository role `role`) do `action`?

    With an `approvers` list only the accounts on it (matched by id once `approver_ids` holds
    them) and the members of its `@org/team` entries (`member_of`: the teams of the list
    `login` was found in) may steer, and they too need write, maintain or admin (an approver
    whose access was lowered steers no more); without a list, write, maintain and admin may (a
    custom role counts as the base role it inherits).
    """
    if approvers:
        if listed_approver(login, approvers, actor_id=actor_id, approver_ids=approver_ids):
            return with_write(login, role, action, f"@{login} is on the approvers list")
        joined = {m.lower() for m in member_of}
        teams = team_approvers(approvers)
        for team in teams:
            if team.lower() in joined:
                return with_write(login, role, action,
                                  f"@{login} is a member of {team}, on the approvers list")
        required = f" or a member of {', '.join(f'`{t}`' for t in teams)}" if teams else ""
        if approver_ids and login.lower() in approver_ids:
            return Decision(False, f"{sentence(action)} is for this repository's `approvers`"
                            f"{required}; the login @{login} is on the list, but it belonged to "
                            "another GitHub account when the job started (a renamed or newly "
                            "registered login)")
        return Decision(False, f"{sentence(action)} is for this repository's `approvers`"
                        f"{required}; @{login} is not on the list")
    if role in STEERING_ROLES:
        return Decision(True, f"@{login} has {role} permission")
    return Decision(False, f"{sentence(action)} needs write, maintain or admin permission; "
                    f"@{login} has {role or 'no'} permission")


def with_write(login: str, role: str, action: str, listed: str) -> Decision:
    """An approver's decision: on the list, and still holding a steering role."""
    if role in STEERING_ROLES:
        return Decision(True, f"{listed} with {role} permission")
    return Decision(False, f"{sentence(action)} needs write, maintain or admin permission, for "
                    f"`approvers` too; {listed} but has {role or 'no'} permission")


def sentence(action: str) -> str:
    """`action` ("starting a job") as the start of a sentence."""
    return action[:1].upper() + action[1:]


def base_role(data: Any) -> str:
    """The role a collaborator-permission answer grants: a basic `role_name` as it is, a custom
    role by the permission flags it inherits (GitHub reports maintain as `write`, triage as
    `read` in `permission`, so the flags come first)."""
    if not isinstance(data, dict):
        return "none"
    role = str(data.get("role_name") or "")
    if role in BASIC_ROLES:
        return role
    user = data.get("user")
    flags = user.get("permissions") if isinstance(user, dict) else None
    if isinstance(flags, dict):
        for flag, name in ROLE_FLAGS:
            if flags.get(flag):
                return name
    permission = str(data.get("permission") or "none")
    return permission if permission in BASIC_ROLES else "none"
