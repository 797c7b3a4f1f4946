"""Events that end, park or cancel jobs are confirmed with GitHub before anything happens.

A webhook's signature covers its body only, and a body captured once can be sent again: what a
delivery says happened (an uninstall, a suspension, a repository removed, an issue or pull
request closed) is asked of GitHub's API first, and a delivery GitHub does not confirm changes
nothing (a warning in the log names it). The web app refuses replays it can recognise
(bot/web/replays.py); this is the check that does not depend on having seen the body before.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.events import Event
from bot.plumbing.suspension_marks import SUSPEND, UNSUSPEND

if TYPE_CHECKING:
    from bot.github.client import Installation
    from bot.server.context import ServerContext

log = logging.getLogger(__name__)
DELETED, REMOVED = "installation.deleted", "installation_repositories.removed"


def confirmed_installation_event(ctx: ServerContext, event: Event) -> Event | None:
    """`event` as far as GitHub confirms it: an uninstall only when GitHub no longer has the
    installation, a suspend (unsuspend) only when it is (not) suspended, a removal only for
    the repositories the installation no longer covers; None when nothing is confirmed.
    Other installation events pass unchanged."""
    if event.reason in (DELETED, SUSPEND, UNSUSPEND):
        now = ctx.github.installation(event.installation_id)
        holds = {DELETED: now is None,
                 SUSPEND: now is not None and bool(now.get("suspended_at")),
                 UNSUSPEND: now is not None and not now.get("suspended_at")}[event.reason]
        if not holds:
            _unconfirmed(event, "GitHub says otherwise")
            return None
        return event
    if event.reason == REMOVED:
        gone = tuple(repo for repo in event.repos if "/" in repo and
                     ctx.github.repository_installation(*repo.split("/", 1))
                     != event.installation_id)
        if not gone:
            _unconfirmed(event, "the installation still covers every repository named")
            return None
        return event.model_copy(update={"repos": gone})
    return event


def closed_on_github(client: Installation, event: Event) -> bool:
    """Whether the issue or pull request a close delivery names is closed now."""
    owner, name = event.repo.split("/", 1)
    if client.issue(owner, name, event.number).state == "closed":
        return True
    _unconfirmed(event, f"#{event.number} is open on GitHub")
    return False


def _unconfirmed(event: Event, why: str) -> None:
    log.warning("delivery ignored: GitHub does not confirm it (%s); a replayed body?", why,
                extra={"delivery": event.delivery_id, "action": event.reason or event.kind.value,
                       "installation_id": event.installation_id, "repo": event.repo})
