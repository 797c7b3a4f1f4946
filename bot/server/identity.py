"""Who the App's commits are by: its bot user, `<slug>[bot] <<id>+<slug>[bot]@users.noreply.
<host>>`, as GitHub shows the App's own web edits (the host is github.com, or the GitHub
Enterprise Server's web host). The bot user's id is read once from `GET /users/<slug>[bot]` and
kept for the life of the process."""

from __future__ import annotations

import logging
import threading
from urllib.parse import urlsplit

from bot.github.app import web_base
from bot.github.client import Installation
from bot.github.errors import ForgeError
from jobs.adapters.worktree import identity_env

log = logging.getLogger(__name__)


def noreply_host(api_url: str) -> str:
    """github.com, or a GitHub Enterprise Server's web host (its API is `https://HOST/api/v3`)."""
    if not urlsplit(api_url).path.rstrip("/").endswith("/api/v3"):
        return "github.com"
    return urlsplit(web_base(api_url)).hostname or "github.com"


class BotIdentity:
    """The App's commit identity, its bot user's id asked for once."""

    def __init__(self, *, app_slug: str, api_url: str) -> None:
        self.login = f"{app_slug}[bot]"
        self.host = noreply_host(api_url)
        self._env: dict[str, str] | None = None
        self._lock = threading.Lock()

    def email(self, user_id: int) -> str:
        """The bot user's noreply address (without an id when GitHub did not give one)."""
        local = f"{user_id}+{self.login}" if user_id else self.login
        return f"{local}@users.noreply.{self.host}"

    def env(self, client: Installation) -> dict[str, str]:
        """The git environment of the App's identity; the id is read once, then kept (a failed
        read is tried again on the next commit, meanwhile the address carries no id)."""
        with self._lock:
            if self._env is not None:
                return dict(self._env)
            try:
                user_id = client.user_id(self.login)
            except ForgeError as exc:
                log.warning("could not read the bot user's id", extra={"code": exc.code})
                return identity_env(self.login, self.email(0))
            env = identity_env(self.login, self.email(user_id))
            if user_id:
                self._env = env
            return dict(env)
