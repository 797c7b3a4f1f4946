"""Server-mode settings from `STEPWISE_*` environment variables (pydantic-settings), validated once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.github.client import DEFAULT_API_VERSION, ApiVersion
from jobs.domain.errors import BadInputError

ENV_PREFIX = "STEPWISE_"


class SettingsError(BadInputError):
    """A missing or malformed setting; start-up stops with this message."""

    code = "invalid_settings"


class Settings(BaseSettings):
    """Everything the web app and the workers need; secrets are SecretStr and never printed."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    app_id: int = Field(gt=0)
    app_slug: str = Field(default="stepwise", pattern=r"^[a-z0-9][a-z0-9-]{0,38}$")
    private_key: SecretStr | None = None
    private_key_path: Path | None = None
    webhook_secret: SecretStr = Field(min_length=1)
    redis_url: str = "redis://127.0.0.1:6379/0"
    github_api_url: str = Field(default="https://api.github.com", pattern=r"^https?://")
    # Sent as X-GitHub-Api-Version on every REST call; GitHub Enterprise Server knows only 2022-11-28.
    github_api_version: ApiVersion = DEFAULT_API_VERSION
    workdir: Path = Path("/var/lib/stepwise")
    env_cache_mb: int = Field(default=4096, ge=1)  # job environments kept per worker (LRU)
    host: str = "0.0.0.0"  # noqa: S104 - the web app listens on all interfaces by default
    port: int = Field(default=8000, gt=0, lt=65536)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    dashboard_token: SecretStr | None = None
    task_center_url: str | None = None
    allow_unsandboxed: bool = False
    lease_ttl_s: int = Field(default=30, ge=1, le=3600)  # how fast a dead worker is noticed
    log_format: Literal["text", "json"] = "text"  # json: one JSON object per line
    reap_interval_s: int = Field(default=20, ge=1, le=3600)  # how often the reaper looks
    # Waits before retrying a transient fault (5, 15, 45 s); benchmarks shorten them.
    backoff_s: tuple[float, ...] = Field(default=(5.0, 15.0, 45.0), min_length=1, max_length=10)
    # Waits between the tries of one repeat-safe GitHub call, retried in place (bot.github.retry).
    call_backoff_s: tuple[float, ...] = Field(default=(0.5, 1.0, 2.0), max_length=10)
    # How often the reconciler re-publishes what GitHub has not confirmed (bot.server.reconciler).
    reconcile_interval_s: int = Field(default=20, ge=1, le=3600)
    # How long a job waiting for CI goes without its checks read before the reconciler queues a
    # step that reads them (a missed webhook; bot.server.ci_poll).
    ci_poll_s: int = Field(default=60, ge=1, le=3600)
    max_running_per_repo: int = Field(default=1, ge=1, le=100)
    # Per installation id, overriding max_running_per_repo, e.g. '{"12345": 3}'.
    installation_limits: dict[int, int] = {}
    # Jobs of one installation running at once across its repositories (0: no limit), so that
    # one organisation's many repositories cannot hold every worker.
    max_running_per_installation: int = Field(default=0, ge=0, le=10_000)

    def running_limit(self, installation_id: int) -> int:
        return self.installation_limits.get(installation_id, self.max_running_per_repo)

    def installation_running_limit(self) -> int | None:
        return self.max_running_per_installation or None

    @model_validator(mode="after")
    def _one_private_key(self) -> Settings:
        if self.private_key is None and self.private_key_path is None:
            raise ValueError("set STEPWISE_PRIVATE_KEY (the PEM text) or STEPWISE_PRIVATE_KEY_PATH")
        if self.private_key_path is not None and not self.private_key_path.is_file():
            raise ValueError(f"STEPWISE_PRIVATE_KEY_PATH {self.private_key_path} is not a file")
        return self

    def app_private_key(self) -> str:
        if self.private_key is not None:
            return self.private_key.get_secret_value()
        assert self.private_key_path is not None  # checked by the validator
        return self.private_key_path.read_text(encoding="utf-8")


def load_settings() -> Settings:
    """Read and validate the environment; a problem names the variable and how to fix it."""
    try:
        return Settings()  # values come from the environment
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"])
            name = f"{ENV_PREFIX}{field.upper()}" if field else "settings"
            problems.append(f"{name}: {error['msg']}")
        raise SettingsError(
            "server settings are missing or malformed: " + "; ".join(problems),
            hint="set the named STEPWISE_* environment variables (see README, 'Install the app')",
        ) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
