"""The mode-level features plugged into the server, one line each (`ServerPlug`,
bot/server/plug.py), in the order their hooks are asked. Nothing else in bot/server names
them: the event tasks (handlers.py), the comment commands (comments.py) and the reconciler
(reconciler.py) ask these hooks."""

from __future__ import annotations

from bot.server.campaigns.plug import PLUG as CAMPAIGNS
from bot.server.plug import ServerPlug

PLUGS: tuple[ServerPlug, ...] = (
    CAMPAIGNS,  # one spec across many repositories: its label, its issue, `/stepwise campaign`
)
