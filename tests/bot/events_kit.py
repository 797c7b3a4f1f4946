"""Shared by the event tests (no tests here): a recorded webhook payload, with overrides,
normalised into an event as the web app does it."""

from __future__ import annotations

from typing import Any

from bot.events import Event, normalise
from tests.kit.webhooks import event_header, make_event


def event_for(name: str, **overrides: Any) -> Event:
    return normalise(event_header(name), "d-1", make_event(name, **overrides))
