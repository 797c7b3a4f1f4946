"""Server-mode settings from `STEPWISE_*` environment variables (pydantic-settings), validated once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.github.api_versions import DEFAULT_API_VERSION, ApiVersion
from jobs.basics.errors import BadInputError

ENV_PREFIX = "STEPWISE_"
# Which process reads the settings: each role requires only what it uses (docs/operating.md).
Role = Literal["web", "worker", "all"]


class SettingsError(BadInputError):
    """A missing or malformed setting; start-up stops with this message."""

    code = "invalid_settings"


class Settings(BaseSettings):
    """Everything the web app and the workers need; secrets are SecretStr and never printed."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    app_id: int | None = Field(default=None, gt=0)  # required by workers (the App's identity)
    # The App's slug: comments may start with `@<slug>` as well as `/stepwise`.
    app_slug: str = Field(default="stepwise", pattern=r"^[a-z0-9][a-z0-9-]{0,38}$")
    # The App's private key (PEM), given inline or as a file; workers need one of the two.
    private_key: SecretStr | None = None
    private_key_path: Path | None = None  # the PEM file, when not given inline
    webhook_secret: SecretStr | None = Field(default=None, min_length=1)  # required by the web app
    # Also accepted while the secret is rotated (docs/operating.md, "Rotating secrets").
    webhook_secret_previous: SecretStr | None = Field(default=None, min_length=1)
    # Redis for the queue and the job records, shared by the web app and every worker.
    redis_url: str = "redis://127.0.0.1:6379/0"
    # Each Redis call of the web app and of a worker's own code gives up after this long; a
    # worker's blocking wait for work gets dequeue_timeout_s plus a margin (bot.plumbing.connections).
    redis_socket_timeout_s: float = Field(default=5.0, gt=0, le=300)
    redis_connect_timeout_s: float = Field(default=5.0, gt=0, le=300)  # seconds to connect to Redis
    # The web app's Redis work for one request (a webhook's dedupe and enqueue, a health check)
    # is given up after this long: 503 with Retry-After, well within GitHub's 10 s.
    web_redis_deadline_s: float = Field(default=2.0, gt=0, le=9)
    # How long one blocking wait of an idle worker lasts before it re-registers (RQ's 405 s).
    dequeue_timeout_s: int = Field(default=405, ge=1, le=3600)
    # GitHub's REST API; GitHub Enterprise Server: https://HOST/api/v3.
    github_api_url: str = Field(default="https://api.github.com", pattern=r"^https?://")
    # Sent as X-GitHub-Api-Version on every REST call; GitHub Enterprise Server knows only 2022-11-28.
    github_api_version: ApiVersion = DEFAULT_API_VERSION
    workdir: Path = Path("/var/lib/stepwise")  # clones, worktrees, environments and artifacts
    env_cache_mb: int = Field(default=4096, ge=1)  # job environments kept per worker (LRU)
    # The web app's address (`stepwise serve`): all interfaces by default.
    host: str = "0.0.0.0"  # noqa: S104 - the web app listens on all interfaces by default
    port: int = Field(default=8000, gt=0, lt=65536)  # the web app's port (`stepwise serve`)
    llm_base_url: str | None = None  # an OpenAI-compatible endpoint for `recipe: llm`
    llm_model: str | None = None  # the model `recipe: llm` asks
    llm_api_key: SecretStr | None = None  # the model endpoint's key (never logged)
    # The task center's login token; unset, the task center and its API are closed.
    dashboard_token: SecretStr | None = None
    # The task center's public address, for links in comments and check runs.
    task_center_url: str | None = None
    # Run validation without bubblewrap on a server (refused at start otherwise).
    allow_unsandboxed: bool = False
    lease_ttl_s: int = Field(default=30, ge=1, le=3600)  # how fast a dead worker is noticed
    log_format: Literal["text", "json"] = "text"  # json: one JSON object per line
    reap_interval_s: int = Field(default=20, ge=1, le=3600)  # how often the reaper looks
    # Waits before retrying a transient fault (5, 15, 45 s); benchmarks shorten them.
    backoff_s: tuple[float, ...] = Field(default=(5.0, 15.0, 45.0), min_length=1, max_length=10)
    # Waits between the tries of one repeat-safe GitHub call, retried in place (bot.github.errors).
    call_backoff_s: tuple[float, ...] = Field(default=(0.5, 1.0, 2.0), max_length=10)
    # Each installation's content-creating GitHub requests (bot.github.write_budget): GitHub's
    # secondary limits are 80 a minute and 500 an hour; up to the burst go at once, then spaced.
    github_writes_per_minute: int = Field(default=80, ge=1, le=10_000)
    github_writes_per_hour: int = Field(default=500, ge=1, le=100_000)  # GitHub's hourly limit
    github_write_burst: int = Field(default=10, ge=1, le=1_000)  # writes sent at once, then spaced
    # How often the reconciler re-publishes what GitHub has not confirmed (bot.server.reconciler).
    reconcile_interval_s: int = Field(default=20, ge=1, le=3600)
    # How long a job waiting for CI goes without its checks read before the reconciler queues a
    # step that reads them (a missed webhook; bot.server.ci_poll).
    ci_poll_s: int = Field(default=60, ge=1, le=3600)
    # Days an ended job's record stays in Redis before the reconciler removes it (0: forever).
    retain_ended_days: int = Field(default=90, ge=0, le=36500)
    max_running_per_repo: int = Field(default=1, ge=1, le=100)  # jobs of one repository at once
    # Per installation id, overriding max_running_per_repo, e.g. '{"12345": 3}'.
    installation_limits: dict[int, int] = {}
    # Jobs of one installation running at once across its repositories (0: no limit), so that
    # one organisation's many repositories cannot hold every worker.
    max_running_per_installation: int = Field(default=0, ge=0, le=10_000)
    # Owner-level allowlist of campaign control repositories, e.g. '["acme/platform"]': an owner
    # named here runs campaigns only from the repositories (names or globs) listed for it.
    campaign_control_repos: list[
        Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._*?-]+$")]
    ] = Field(default=[], max_length=1000)

    def running_limit(self, installation_id: int) -> int:
        return self.installation_limits.get(installation_id, self.max_running_per_repo)

    def installation_running_limit(self) -> int | None:
        return self.max_running_per_installation or None

    @field_validator("redis_url")
    @classmethod
    def _redis_url_parses(cls, value: str) -> str:
        problem = redis_url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _key_path_exists(self) -> Settings:
        if self.private_key_path is not None and not self.private_key_path.is_file():
            raise ValueError(f"STEPWISE_PRIVATE_KEY_PATH {self.private_key_path} is not a file")
        return self

    def missing_for(self, role: Role) -> list[str]:
        """The settings `role` needs that are not set: workers act as the App (its id and key),
        the web app checks webhook signatures (the secret); neither needs the other's."""
        missing = []
        if role in ("worker", "all"):
            if self.app_id is None:
                missing.append(f"{ENV_PREFIX}APP_ID: the GitHub App's id is required by workers")
            if self.private_key is None and self.private_key_path is None:
                missing.append(f"{ENV_PREFIX}PRIVATE_KEY or {ENV_PREFIX}PRIVATE_KEY_PATH: set "
                               "STEPWISE_PRIVATE_KEY (the PEM text) or STEPWISE_PRIVATE_KEY_PATH")
            elif role == "worker" and (problem := private_key_problem(self)):
                missing.append(problem)
        if role in ("web", "all") and self.webhook_secret is None:
            missing.append(f"{ENV_PREFIX}WEBHOOK_SECRET: required by the web app")
        return missing

    def app_credentials(self) -> tuple[int, str]:
        """The App's id and private key (PEM text), for the processes that act as the App."""
        missing = self.missing_for("worker")
        if missing or self.app_id is None:
            raise SettingsError("server settings are missing: " + "; ".join(missing),
                                hint="workers act as the GitHub App: set the named variables")
        return self.app_id, self.app_private_key()

    def app_private_key(self) -> str:
        if self.private_key is not None:
            return self.private_key.get_secret_value()
        if self.private_key_path is None:
            raise SettingsError("no App private key: set STEPWISE_PRIVATE_KEY or "
                                "STEPWISE_PRIVATE_KEY_PATH")
        return self.private_key_path.read_text(encoding="utf-8")

    def webhook_secrets(self) -> tuple[str, ...]:
        """The secrets a delivery's signature may be made with: the current one first, then the
        previous one while a rotation is under way."""
        secrets = tuple(s.get_secret_value() for s in (self.webhook_secret,
                                                        self.webhook_secret_previous) if s)
        if not secrets:
            raise SettingsError("no webhook secret: set STEPWISE_WEBHOOK_SECRET",
                                hint="the web app checks each delivery's signature with it")
        return secrets


ENCODE_HINT = ("percent-encode the password (`/` as %2F, `@` as %40, `:` as %3A, `#` as %23, `?` "
               "as %3F, `%` as %25): python3 -c 'import sys, urllib.parse; "
               "print(urllib.parse.quote(sys.argv[1], safe=\"\"))' 'PASSWORD'")


def redis_url_problem(url: str) -> str:
    """Why STEPWISE_REDIS_URL cannot be used ("" when it can), never quoting it (it may hold
    the password)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return "" if parts.path else "a unix:// URL needs the socket's path (unix:///path/redis.sock)"
    if parts.scheme not in ("redis", "rediss"):
        return "the Redis URL must start with redis://, rediss:// or unix://"
    try:
        parts.port  # noqa: B018 - parsing it is the check
    except ValueError:
        return ("the Redis URL's port is not a number: a password holding a character URLs "
                f"reserve cuts the URL short; {ENCODE_HINT}")
    if "@" in parts.path or "@" in parts.query or "@" in parts.fragment or "#" in url:
        return (f"the Redis URL's password holds a character URLs reserve; {ENCODE_HINT}")
    if not parts.hostname:
        return "the Redis URL names no host (redis://[:password@]host:6379/0)"
    if parts.path not in ("", "/") and not parts.path[1:].isdigit():
        return ("the Redis URL's database (after the host's `/`) is not a number "
                f"(redis://[:password@]host:6379/0); if a password holds `/`, {ENCODE_HINT}")
    return ""


def private_key_problem(settings: Settings) -> str:
    """Why the App's private key cannot sign GitHub's JWT ("" when it can): caught at start,
    not at the first call."""
    name = f"{ENV_PREFIX}PRIVATE_KEY" if settings.private_key is not None \
        else f"{ENV_PREFIX}PRIVATE_KEY_PATH"
    try:
        load_pem_private_key(settings.app_private_key().strip().encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm, OSError) as exc:
        reason = str(exc).split(". ")[0][:100] if str(exc) else type(exc).__name__
        return (f"{name}: not a PEM private key ({reason}); give the whole .pem file GitHub "
                "generated for the App, from its -----BEGIN line to its -----END line")
    return ""


def load_settings(role: Role = "all") -> Settings:
    """Read and validate the environment for one role (`web`, `worker`, or `all` of them); a
    problem names the variable and how to fix it."""
    problems: list[str] = []
    try:
        settings = Settings()  # values come from the environment
    except ValidationError as exc:
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"])
            name = f"{ENV_PREFIX}{field.upper()}" if field else "settings"
            problems.append(f"{name}: {error['msg']}")
    else:
        problems = settings.missing_for(role)
        if not problems:
            return settings
    raise SettingsError(
        "server settings are missing or malformed: " + "; ".join(problems),
        hint="set the named STEPWISE_* environment variables (see docs/getting-started/install-app.md)",
    ) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
