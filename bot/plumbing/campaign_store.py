"""A campaign's record in Redis: the pure record plus what the server needs to act on it (the
control issue, the installation, the settings and task read from the issue, who approved).

One Redis hash per campaign, at `stepwise:campaign:<repo>#<n>`:
  header              the small document: everything but the entries and the counters
  repo:<name>         one field per repository: its entry (JSON)
  count:<counter>     the running counters (jobs.features.campaigns.record.COUNTERS)
  dashboard_digest    of the dashboard last written into the issue
A repository event writes its one field and the counters' changes (HINCRBY) in one MULTI/EXEC
(the header only when it changed), not the whole record. A record in the older format (one JSON
string at the same key) is rewritten in this one when it is loaded.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr
from redis import Redis
from redis.typing import EncodableT, FieldT

from bot.plumbing.connections import as_text
from bot.plumbing.keys import ALL_CAMPAIGNS, CAMPAIGNS, campaign_key
from jobs.features.campaigns.record import COUNTERS, Campaign, CampaignStatus
from jobs.features.campaigns.settings import CampaignSettings

__all__ = ["CAMPAIGNS", "CampaignDoc", "active_keys", "find", "load", "newest_keys", "save"]

ENDED = (CampaignStatus.COMPLETED, CampaignStatus.CANCELLED)
HEADER, DIGEST, REPO, COUNT = "header", "dashboard_digest", "repo:", "count:"


class CampaignDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    campaign: Campaign
    settings: CampaignSettings
    control: str                 # owner/name of the control repository
    number: int                  # the campaign issue
    installation_id: int
    title: str
    task_body: str               # each repository's issue body (the ```stepwise block)
    issue_text: str              # the campaign issue's own text, without the dashboard
    approvers: list[str] = []    # the control repository's `approvers`
    approver_ids: dict[str, int] = {}  # their account ids when it started (bot/steering.py)
    approved_by: str = ""        # who last approved: per-repository effects need their rights
    approved_by_id: int = 0      # their account id (from the webhook): approvers match by id
    dashboard_digest: str = ""   # of the dashboard last written: unchanged, nothing is sent
    closed_by: str = ""          # who closed the campaign issue (it cancelled the campaign)

    # What Redis holds now (None: nothing yet, or the older format: write everything).
    _stored: dict[str, Any] | None = PrivateAttr(default=None)

    @property
    def key(self) -> str:
        return campaign_key(self.control, self.number)

    def header_json(self) -> str:
        return self.model_dump_json(exclude={"dashboard_digest": True,
                                             "campaign": {"repos", "tally"}})



def load(redis: Redis, key: str) -> CampaignDoc | None:
    kind = as_text(redis.type(key))
    if kind == "string":  # the older format: the whole record as one JSON document
        raw = redis.get(key)
        return None if raw is None else CampaignDoc.model_validate_json(raw)
    fields = {as_text(k): v for k, v in redis.hgetall(key).items()}
    if HEADER not in fields:
        return None
    header = json.loads(fields[HEADER])
    tally = {name[len(COUNT):]: int(value) for name, value in fields.items()
             if name.startswith(COUNT)}
    entries = [json.loads(value) for name, value in fields.items() if name.startswith(REPO)]
    header["campaign"] |= {"repos": {entry["name"]: entry for entry in entries}, "tally": tally}
    header[DIGEST] = as_text(fields.get(DIGEST, b""))
    doc = CampaignDoc.model_validate(header)
    doc._stored = {HEADER: as_text(fields[HEADER]), DIGEST: doc.dashboard_digest,
                   COUNT: dict(tally)}
    return doc


def find(redis: Redis, control: str, number: int) -> CampaignDoc | None:
    return load(redis, campaign_key(control, number))


def save(redis: Redis, doc: CampaignDoc) -> int:
    """Write what changed since the record was loaded (a new or migrated record whole), in one
    MULTI/EXEC; the bytes sent as values."""
    campaign, stored = doc.campaign, doc._stored
    header = doc.header_json()
    if stored is None:
        names, old_tally = list(campaign.repos), dict.fromkeys(COUNTERS, 0)
    else:
        names, old_tally = sorted(campaign.changed_names()), stored[COUNT]
    fields: dict[FieldT, EncodableT] = {f"{REPO}{name}": campaign.repos[name].model_dump_json()
                                        for name in names}
    if stored is None or stored[HEADER] != header:
        fields[HEADER] = header
    if stored is None or stored[DIGEST] != doc.dashboard_digest:
        fields[DIGEST] = doc.dashboard_digest
    deltas = {name: value - old_tally.get(name, 0) for name, value in campaign.tally.items()
              if value != old_tally.get(name, 0) or stored is None}
    with redis.pipeline(transaction=True) as pipe:  # MULTI ... EXEC: all of it or none
        if stored is None:
            pipe.delete(doc.key)  # a new record, or one in the older format
        if fields:
            pipe.hset(doc.key, mapping=fields)
        for name, delta in deltas.items():
            pipe.hincrby(doc.key, f"{COUNT}{name}", delta)
        pipe.zadd(ALL_CAMPAIGNS, {doc.key: campaign.created_at.timestamp()})
        if campaign.status in ENDED:
            pipe.srem(CAMPAIGNS, doc.key)
        else:
            pipe.sadd(CAMPAIGNS, doc.key)
        pipe.execute()
    campaign.saved()
    doc._stored = {HEADER: header, DIGEST: doc.dashboard_digest, COUNT: dict(campaign.tally)}
    return sum(len(str(name)) + len(str(value).encode()) for name, value in fields.items()) + sum(
        len(COUNT) + len(name) + len(str(delta)) for name, delta in deltas.items())


def fingerprint(redis: Redis, key: str) -> int:
    """Changes whenever the record does (tests and benchmarks wait for it to settle)."""
    return hash(tuple(sorted(redis.hgetall(key).items())))


def newest_keys(redis: Redis, limit: int) -> list[str]:
    """Every campaign's key, newest first (running or ended)."""
    return [k.decode() if isinstance(k, bytes) else str(k)
            for k in redis.zrevrange(ALL_CAMPAIGNS, 0, limit - 1)]


def active_keys(redis: Redis) -> list[str]:
    return sorted(as_text(k) for k in redis.smembers(CAMPAIGNS))
