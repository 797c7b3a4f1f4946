"""The repository's trigger and campaign labels as a worker last read them from
`.github/stepwise.yml` (only a worker reads it), remembered for an hour so that the web app can
tell a label that cannot start anything without a worker; a push that may change the config
forgets them."""

from __future__ import annotations

import redis

from bot.plumbing.keys import campaign_label_key, trigger_label_key

DEFAULT_TRIGGER_LABEL = "stepwise"
DEFAULT_CAMPAIGN_LABEL = "stepwise-campaign"
TRIGGER_LABEL_TTL_S = 3600


def remember_trigger_label(connection: redis.Redis, repo: str, label: str,
                           campaign_label: str = DEFAULT_CAMPAIGN_LABEL) -> None:
    connection.set(trigger_label_key(repo), label.casefold(), ex=TRIGGER_LABEL_TTL_S)
    connection.set(campaign_label_key(repo), campaign_label.casefold(), ex=TRIGGER_LABEL_TTL_S)


def known_trigger_label(connection: redis.Redis, repo: str) -> str | None:
    value = connection.get(trigger_label_key(repo))
    return value.decode() if isinstance(value, bytes) else value


def known_campaign_label(connection: redis.Redis, repo: str) -> str:
    """The campaign label remembered for `repo` ("" when none is)."""
    value = connection.get(campaign_label_key(repo))
    return value.decode() if isinstance(value, bytes) else value or ""


def forget_trigger_label(connection: redis.Redis, repo: str) -> None:
    connection.delete(trigger_label_key(repo), campaign_label_key(repo))


def is_trigger(label: str, known: str | None) -> bool:
    """Labels are case-insensitive on GitHub."""
    return label.casefold() == (known or DEFAULT_TRIGGER_LABEL).casefold()
