"""Who may start and steer a job: one decision, with its reason."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

STEERING_ROLES = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def decide(*, login: str, role: str, approvers: Sequence[str], action: str) -> Decision:
    """May `login` (whose repository role is `role`) do `action`?

    With an `approvers` list only the logins on it may steer (team entries are not resolved
    yet and match nobody); without one, write, maintain and admin may.
    """
    if approvers:
        if login.lower() in {a.lower() for a in approvers if not a.startswith("@")}:
            return Decision(True, f"@{login} is on the approvers list")
        return Decision(False, f"@{login} is not on this repository's `approvers` list, so "
                        f"cannot {action}")
    if role in STEERING_ROLES:
        return Decision(True, f"@{login} has {role} permission")
    return Decision(False, f"@{login} has {role} permission; {action} needs write, maintain or "
                    "admin")
