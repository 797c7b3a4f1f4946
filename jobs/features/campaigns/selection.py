"""Which repositories a campaign covers: by name or glob, topic and language, and why each of the
others is left out (archived, fork, no write permission, not installed, no match, config)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from jobs.features.campaigns.settings import CampaignSettings


@dataclass(frozen=True)
class RepoFacts:
    """What a mode knows about a candidate repository before planning it."""

    name: str
    topics: tuple[str, ...] = ()
    language: str | None = None
    archived: bool = False
    fork: bool = False
    can_write: bool = True
    installed: bool = True
    aliases: tuple[str, ...] = field(default=())  # other names a glob may match (local: path)


def _matches(patterns: list[str], facts: RepoFacts) -> bool:
    names = (facts.name, *facts.aliases)
    return any(fnmatchcase(name.lower(), pattern.lower()) for pattern in patterns for name in names)


def left_out_reason(settings: CampaignSettings, facts: RepoFacts) -> str | None:
    """None when the repository is a candidate; else why it is left out, in words."""
    if settings.repositories and not _matches(settings.repositories, facts):
        return "not named in `campaign.repositories`"
    if settings.exclude and _matches(settings.exclude, facts):
        return "named in `campaign.exclude`"
    if settings.topics and not {t.lower() for t in facts.topics} & {
            t.lower() for t in settings.topics}:
        return "has none of the topics " + ", ".join(settings.topics)
    if settings.languages and (facts.language or "").lower() not in {
            lang.lower() for lang in settings.languages}:
        return f"its language is {facts.language or 'unknown'}, not " + ", ".join(
            settings.languages)
    if not facts.installed:
        return "the App is not installed there"
    if facts.archived:
        return "archived"
    if facts.fork:
        return "a fork"
    if not facts.can_write:
        return "no write permission"
    return None
