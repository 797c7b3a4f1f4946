"""Cheap no-ops: deliveries the web app can tell from the payload (and one Redis lookup) cannot
concern a job, answered 202 without queueing a worker task that would make API calls.

The repository's trigger label lives in `.github/stepwise.yml`, which only a worker reads; the
worker remembers it for an hour (bot/plumbing/trigger_labels.py), and a push that may change the
config forgets it.
"""

from __future__ import annotations

import re

import redis

from bot.events import Event, Kind
from bot.plumbing.keys import campaign_key, ci_key, issue_key, pull_key
from bot.plumbing.trigger_labels import (
    DEFAULT_CAMPAIGN_LABEL,
    DEFAULT_TRIGGER_LABEL,
    is_trigger,
    known_campaign_label,
    known_trigger_label,
)

BRANCH_PREFIX = "stepwise/"
JOB_BRANCH = re.compile(r"^stepwise/issue-(\d+)(?:-\d+)?$")


def noop_reason(event: Event, connection: redis.Redis) -> str:
    """Why this delivery cannot concern a job, or '' when a worker must look at it."""
    if event.kind is Kind.LABELED:
        known = known_trigger_label(connection, event.repo)
        labels = {DEFAULT_TRIGGER_LABEL, DEFAULT_CAMPAIGN_LABEL,
                  known_campaign_label(connection, event.repo)}
        if event.label.casefold() in labels or known is None:
            return ""  # maybe the trigger or the campaign label (or a broken config to report)
        return "" if is_trigger(event.label, known) else f"label {event.label!r} is not the trigger"
    if event.kind in (Kind.ISSUE_CLOSED, Kind.ISSUE_EDITED, Kind.ISSUE_REOPENED):
        if connection.exists(issue_key(event.repo, event.number),
                             campaign_key(event.repo, event.number)):
            return ""
        known = known_trigger_label(connection, event.repo)
        if any(is_trigger(label, known) for label in event.labels):
            return ""  # a job whose record was lost is rebuilt by the worker
        return "no job on this issue"
    if event.kind is Kind.CI:  # one read: does a job wait on this commit's CI?
        return "" if connection.exists(ci_key(event.repo, event.sha)) else "no job waits on this commit"
    if event.kind in (Kind.PULL_CLOSED, Kind.PULL_REOPENED):
        match = JOB_BRANCH.match(event.head_ref)
        if not event.head_ref.startswith(BRANCH_PREFIX):
            return "the pull request's branch is outside stepwise/"
        if connection.exists(pull_key(event.repo, event.number)) or (
                match and connection.exists(issue_key(event.repo, int(match[1])))):
            return ""
        return "no job on this pull request"
    return ""
