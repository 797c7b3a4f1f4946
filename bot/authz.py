"""Who may start and steer a job: one decision, with its reason."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

STEERING_ROLES = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def team_approvers(approvers: Sequence[str]) -> list[str]:
    """The `@org/team` entries of an approvers list."""
    return [a for a in approvers if a.startswith("@") and "/" in a]


def decide(*, login: str, role: str, approvers: Sequence[str], action: str,
           member_of: Collection[str] = ()) -> Decision:
    """May `login` (whose repository role is `role`) do `action`?

    With an `approvers` list only the logins on it and the members of its `@org/team` entries
    (`member_of`: the teams of the list `login` was found in) may steer; without one, write,
    maintain and admin may (a custom role counts as the base role it inherits).
    """
    if approvers:
        if login.lower() in {a.lower() for a in approvers if not a.startswith("@")}:
            return Decision(True, f"@{login} is on the approvers list")
        joined = {m.lower() for m in member_of}
        teams = team_approvers(approvers)
        for team in teams:
            if team.lower() in joined:
                return Decision(True, f"@{login} is a member of {team}, on the approvers list")
        required = f" or a member of {', '.join(f'`{t}`' for t in teams)}" if teams else ""
        return Decision(False, f"@{login} is not on this repository's `approvers` list{required}, "
                        f"so cannot {action}")
    if role in STEERING_ROLES:
        return Decision(True, f"@{login} has {role} permission")
    return Decision(False, f"@{login} has {role} permission; {action} needs write, maintain or "
                    "admin")
