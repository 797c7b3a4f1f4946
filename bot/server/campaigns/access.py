"""Who may see a repository in a campaign (issue 40): a campaign previews, lists and adds only
repositories its viewer (the starter, or whoever says `add`) can read, and only those whose name
and figures everyone who can read the control issue could read anyway. Every other repository is
left out silently: no name, no reason, no count. The answers are cached for one preview, so a
preview over N repositories asks GitHub once per private repository, not once per question.

The control repositories an owner allows (`STEPWISE_CAMPAIGN_CONTROL_REPOS`) are checked here too:
an owner named there runs campaigns only from the repositories listed for it."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from bot.authz import BASIC_ROLES
from bot.github.campaign_calls import readers
from bot.github.client import Installation
from bot.github.installed_repos import InstalledRepo

NOT_A_CONTROL = ("this repository is not one of {owner}'s campaign control repositories (the "
                 "App's `STEPWISE_CAMPAIGN_CONTROL_REPOS` setting lists them)")


def control_allowed(control: str, allowed: Sequence[str]) -> bool:
    """Whether campaigns may start in `control`: yes unless the allowlist names its owner, and
    then only when it names the repository (names or globs, case-insensitive)."""
    owner = control.split("/", 1)[0].lower()
    own = [entry.lower() for entry in allowed if entry.split("/", 1)[0].lower() == owner]
    return not own or any(fnmatchcase(control.lower(), entry) for entry in own)


class Audience:
    """The answers one preview needs: can the viewer read this repository, and is everyone
    who reads the control issue a reader of it (public repositories: always; a public control
    issue shows no private or internal one; otherwise its readers must be theirs)."""

    def __init__(self, client: Installation, *, control: InstalledRepo | None, viewer: str) -> None:
        self.client, self.control, self.viewer = client, control, viewer
        self._readers: dict[str, frozenset[str] | None] = {}
        self._reads: dict[str, bool] = {}

    def _readers_of(self, name: str) -> frozenset[str] | None:
        if name.lower() not in self._readers:
            owner, repo = name.split("/", 1)
            self._readers[name.lower()] = readers(self.client, owner, repo)
        return self._readers[name.lower()]

    def viewer_reads(self, repo: InstalledRepo) -> bool:
        if repo.public:
            return True
        if repo.full_name.lower() not in self._reads:
            owner, name = repo.full_name.split("/", 1)
            role = self.client.permission(owner, name, self.viewer)  # base role, or "none"
            self._reads[repo.full_name.lower()] = role in BASIC_ROLES
        return self._reads[repo.full_name.lower()]

    def shown_to_control(self, repo: InstalledRepo) -> bool:
        if repo.public:
            return True
        if self.control is None or self.control.public:
            return False
        if repo.full_name.lower() == self.control.full_name.lower():
            return True
        audience, theirs = self._readers_of(self.control.full_name), self._readers_of(
            repo.full_name)
        return audience is not None and theirs is not None and audience <= theirs

    def may_see(self, repo: InstalledRepo) -> bool:
        """The viewer can read it and the control issue may show it."""
        return bool(self.viewer) and self.viewer_reads(repo) and self.shown_to_control(repo)
