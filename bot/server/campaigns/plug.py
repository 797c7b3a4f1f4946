"""Campaigns' part of the server, plugged in by one line of bot/server/plugs.py: the campaign
label starts one, closing, reopening and editing its issue are its own, `/stepwise campaign`
steers it and each reconciler pass ticks the running ones."""

from __future__ import annotations

from bot.server.campaigns.closing import campaign_closed, campaign_reopened
from bot.server.campaigns.tasks import campaign_edited, campaign_labeled, steer_campaign, tick_all
from bot.server.plug import ServerPlug

PLUG = ServerPlug(
    labeled=campaign_labeled,
    issue_closed=campaign_closed,
    issue_reopened=campaign_reopened,
    issue_edited=campaign_edited,
    reconcile=tick_all,
    verbs={"campaign": steer_campaign},
)
