"""A campaign's record in Redis: the pure record plus what the server needs to act on it (the
control issue, the installation, the settings and task read from the issue, who approved)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from redis import Redis

from bot.server.keys import ALL_CAMPAIGNS, CAMPAIGNS, campaign_key
from jobs.features.campaigns.record import Campaign, CampaignStatus
from jobs.features.campaigns.settings import CampaignSettings

__all__ = ["CAMPAIGNS", "CampaignDoc", "active_keys", "find", "load", "newest_keys", "save"]

ENDED = (CampaignStatus.COMPLETED, CampaignStatus.CANCELLED)


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
    approved_by: str = ""        # who last approved: per-repository effects need their rights
    dashboard_digest: str = ""   # of the dashboard last written: unchanged, nothing is sent

    @property
    def key(self) -> str:
        return campaign_key(self.control, self.number)


def load(redis: Redis, key: str) -> CampaignDoc | None:
    raw = redis.get(key)
    return None if raw is None else CampaignDoc.model_validate_json(raw)


def find(redis: Redis, control: str, number: int) -> CampaignDoc | None:
    return load(redis, campaign_key(control, number))


def save(redis: Redis, doc: CampaignDoc) -> None:
    with redis.pipeline() as pipe:
        pipe.set(doc.key, doc.model_dump_json())
        pipe.zadd(ALL_CAMPAIGNS, {doc.key: doc.campaign.created_at.timestamp()})
        if doc.campaign.status in ENDED:
            pipe.srem(CAMPAIGNS, doc.key)
        else:
            pipe.sadd(CAMPAIGNS, doc.key)
        pipe.execute()


def newest_keys(redis: Redis, limit: int) -> list[str]:
    """Every campaign's key, newest first (running or ended)."""
    return [k.decode() if isinstance(k, bytes) else str(k)
            for k in redis.zrevrange(ALL_CAMPAIGNS, 0, limit - 1)]


def active_keys(redis: Redis) -> list[str]:
    return sorted(k.decode() if isinstance(k, bytes) else str(k)
                  for k in redis.smembers(CAMPAIGNS))
