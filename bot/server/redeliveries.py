"""Deliveries GitHub could not make (the web app restarting, a load balancer without a ready
replica, Redis refusing them) asked again through the App's API: GitHub never redelivers by
itself. A reconciler pass, at most once per reconciler interval across the workers, lists the
App's latest deliveries (`GET /app/hook/deliveries`) and asks once more (`POST
/app/hook/deliveries/{id}/attempts`) for each delivery whose every attempt failed (no answer,
or an answer outside 200-399), for up to a day after it failed. A redelivery asked while the web
app is still down fails too: the delivery is asked again at the next pass, then after twice as
long each time, up to every 10 minutes (before, the second ask waited 10 minutes, so a pass that
met a web app still starting left the delivery unanswered that long). A redelivery keeps its
`X-GitHub-Delivery`, so the web app's dedupe makes it act once."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from bot.github.client import PER_PAGE, response_json
from bot.plumbing.keys import REDELIVER_ROUND, redelivered_key, redelivery_asks_key
from bot.server.context import ServerContext

log = logging.getLogger(__name__)
ASK_AGAIN_AFTER_S = 600  # the longest wait between two asks for one guid
RETRY_WITHIN_S = 24 * 3600  # GitHub keeps deliveries for three days; a day is plenty
MAX_PER_PASS = 50


def failed_guids(deliveries: list[dict[str, Any]], now: datetime) -> dict[str, int]:
    """guid -> the id of its latest attempt, for guids no attempt of which succeeded."""
    latest: dict[str, tuple[datetime, int]] = {}
    succeeded: set[str] = set()
    for item in deliveries:
        guid, code = str(item.get("guid") or ""), int(item.get("status_code") or 0)
        at = datetime.fromisoformat(str(item["delivered_at"]).replace("Z", "+00:00"))
        if not guid:
            continue
        if 200 <= code < 400:
            succeeded.add(guid)
        elif (now - at).total_seconds() <= RETRY_WITHIN_S and \
                (guid not in latest or latest[guid][0] < at):
            latest[guid] = (at, int(item["id"]))
    return {guid: ident for guid, (_, ident) in latest.items() if guid not in succeeded}


def ask_again_after_s(asks: int, interval_s: float) -> int:
    """How long after its `asks`-th ask a delivery still failing is asked again: one pass
    (GitHub makes the redelivery within seconds), then twice as long each time, at most
    ASK_AGAIN_AFTER_S."""
    return max(1, int(min(ASK_AGAIN_AFTER_S, interval_s * 2 ** (asks - 1)) - 1))


def redeliver_failed(ctx: ServerContext) -> list[str]:
    """Ask GitHub again for the failed deliveries, at most once per pass of the reconciler;
    returns their guids. The round ends a second before the next pass (one interval later) can
    come, as `ask_again_after_s`'s waits do: a round of exactly one interval outlived the next
    pass whenever that pass reached here sooner, and the deliveries waited two intervals."""
    round_s = max(1, ctx.settings.reconcile_interval_s - 1)
    if not ctx.redis.set(REDELIVER_ROUND, "1", nx=True, ex=round_s):
        return []
    app = ctx.github
    rest = app.rest(app._app)
    deliveries = response_json(rest.apps.list_webhook_deliveries(per_page=PER_PAGE))
    asked = []
    now = datetime.now(UTC)
    interval = ctx.settings.reconcile_interval_s
    for guid, delivery_id in list(failed_guids(deliveries, now).items())[:MAX_PER_PASS]:
        if ctx.redis.exists(redelivered_key(guid)):
            continue  # asked lately: GitHub's attempt may not have been made yet
        asks = int(ctx.redis.incr(redelivery_asks_key(guid)))
        ctx.redis.expire(redelivery_asks_key(guid), RETRY_WITHIN_S)
        ctx.redis.set(redelivered_key(guid), str(asks), ex=ask_again_after_s(asks, interval))
        rest.apps.redeliver_webhook_delivery(delivery_id)
        asked.append(guid)
    if asked:
        log.warning("deliveries GitHub could not make were asked again",
                    extra={"count": len(asked), "deliveries": asked[:10]})
    return asked
