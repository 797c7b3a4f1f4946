"""What a worker process needs, built once from the settings: Redis, the store, GitHub, the sandbox.

The server's composition root: building a `ServerContext` installs its recipes and wires the
features' hooks explicitly; nothing is registered by importing a module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from redis import Redis

from bot.github import clone_use
from bot.github.app import BotIdentity, GitHubApp, web_base
from bot.github.client import Installation, preload_api_modules
from bot.github.errors import CallRetry
from bot.github.forge import GitHubForge
from bot.github.git_data import ApiCommits
from bot.github.limited import LimitedUntil
from bot.github.mirror import MirroredRepository, open_mirror
from bot.github.write_budget import BudgetLimits, WriteBudget
from bot.observability.github_metrics import GitHubCallMetrics
from bot.plumbing.connections import worker_redis
from bot.plumbing.keys import github_limited_key, github_writes_key, removed_key
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from jobs.adapters.environments import EnvironmentCache
from jobs.adapters.sandbox import Sandbox, make_sandbox
from jobs.basics.errors import RetryClass, StepwiseError
from jobs.composition import BUILT_IN, SERVER_FEATURES, install
from jobs.engine.engine import Feature, Services
from jobs.kernel.job import Job
from jobs.recipes import RecipeDefinition


def removed_error(full_name: str) -> StepwiseError:
    return StepwiseError(f"Stepwise lost access to {full_name}: the App was uninstalled or "
                         "the repository was removed from its installation",
                         hint="install the App on the repository again",
                         code="installation_removed", retry_class=RetryClass.DO_NOT_RETRY)


@dataclass
class ServerContext:
    settings: Settings
    redis: Redis
    store: RedisStore
    github: GitHubApp
    sandbox: Sandbox
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    features: tuple[Feature, ...] = SERVER_FEATURES  # the features the workers run, in hook order
    recipes: tuple[RecipeDefinition, ...] = BUILT_IN  # the recipes the workers run

    def __post_init__(self) -> None:
        install(self.features, self.recipes)
        self.identity = BotIdentity(app_slug=self.settings.app_slug,
                                    api_url=self.settings.github_api_url)

    @classmethod
    def from_settings(cls, settings: Settings, *, connection: Redis | None = None,
                      sandbox: Sandbox | None = None) -> ServerContext:
        client = connection or worker_redis(settings)
        app_id, private_key = settings.app_credentials()
        return cls(
            settings=settings, redis=client, store=RedisStore(client),
            github=GitHubApp(app_id=app_id, private_key=private_key,
                             base_url=settings.github_api_url,
                             api_version=settings.github_api_version,
                             retry=CallRetry(backoff_s=settings.call_backoff_s),
                             observer=GitHubCallMetrics(client),
                             budget=WriteBudget(client, BudgetLimits(
                                 per_minute=settings.github_writes_per_minute,
                                 per_hour=settings.github_writes_per_hour,
                                 burst=settings.github_write_burst),
                                 key=github_writes_key),
                             limited=LimitedUntil(client, key=github_limited_key)),
            sandbox=sandbox or make_sandbox(require_isolation=not settings.allow_unsandboxed),
        )

    def warm_up(self) -> None:
        """Load what each step needs before RQ forks work horses from this process: a cold
        horse would import githubkit's lazily loaded API modules every time. (The engine and
        everything a step uses are imported by the task handlers the worker installed first,
        bot/server/handlers.py; importing them here would make a cycle with bot/server/steps.)"""
        preload_api_modules(self.settings.github_api_version)

    def forge(self, client: Installation, repo: str, *, squash_only: bool = False) -> GitHubForge:
        """The GitHub forge for one repository, linking to the task center when configured."""
        return GitHubForge(client, repo, squash_only=squash_only,
                           web_url=web_base(self.settings.github_api_url),  # GHES: its host
                           task_center_url=self.settings.task_center_url, clock=self.clock)

    def installation(self, installation_id: int) -> Installation:
        return self.github.client(installation_id)

    def mirror(self, client: Installation, full_name: str, clone_url: str,
               default_branch: str) -> MirroredRepository:
        """The repository's clone, used by this task until it ends (an uninstall's cleanup
        waits for it, bot/github/clone_use.py); refused once the App lost the repository, so
        a task that starts after the cleanup makes no clone again."""
        installation = client.installation_id
        if self.removed(installation, full_name):
            raise removed_error(full_name)
        clone_use.hold(clone_use.users_lock(self.settings.workdir, full_name))
        if self.removed(installation, full_name):  # removed while this task waited
            raise removed_error(full_name)
        return open_mirror(self.settings.workdir, full_name, clone_url,
                           auth=client.git_auth_args, default_branch=default_branch)

    def removed(self, installation_id: int, full_name: str) -> bool:
        """Whether the App was uninstalled from `installation_id`, or `full_name` was taken
        out of it (bot/server/installations.py marks both)."""
        return bool(self.redis.exists(removed_key(installation_id),
                                      removed_key(installation_id, full_name)))

    def services_for(self, job: Job) -> tuple[Services, GitHubForge]:
        """The engine's services for a stored job: its repository's mirror and its forge."""
        client = self.installation(job.server.installation())
        owner, name = job.repo.split("/", 1)
        info = client.repo(owner, name)
        repository = self.mirror(client, job.repo, info.clone_url, info.default_branch)
        if job.config.commit_via == "api":  # commits GitHub signs (DESIGN.md)
            repository.api = ApiCommits(client, job.repo)
        forge = self.forge(client, job.repo, squash_only=info.squash_only)
        return self.engine_services(repository, forge, repo=job.repo), forge

    def engine_services(self, repository: MirroredRepository, forge: GitHubForge, *,
                        repo: str) -> Services:
        """The engine's services for one repository: its mirror, forge and environment cache."""
        envs = self.settings.workdir / "envs" / repo.replace("/", "+")
        repository.identity = self.identity.env(forge.client)  # the App's bot user
        return Services(repository=repository, store=self.store, sandbox=self.sandbox,
                        forge=forge, clock=self.clock, voice=forge.voice, hidden_paths=self.hidden_paths(),
                        environments=EnvironmentCache(
                            envs, limit_bytes=self.settings.env_cache_mb * 2**20),
                        network_deny_hosts=self.own_hosts(), features=self.features)

    def own_hosts(self) -> tuple[str, ...]:
        """Stepwise's own services, refused by the egress proxy even at public addresses."""
        hosts = [urlsplit(self.settings.redis_url).hostname or ""]
        if self.settings.host not in ("0.0.0.0", "::", ""):  # noqa: S104 - a wildcard, not a bind
            hosts.append(self.settings.host)
        return tuple(host for host in dict.fromkeys(hosts) if host)

    def hidden_paths(self) -> tuple[Path, ...]:
        """What sandboxed commands must never see: every clone and worktree (their own
        worktree is bound back), and the App's private key."""
        key = self.settings.private_key_path
        hidden = [self.settings.workdir, *((key,) if key is not None else ())]
        if self.settings.redis_url.startswith("unix://"):  # a socket on disk: no netns covers it
            hidden.append(Path(urlsplit(self.settings.redis_url).path))
        return tuple(hidden)
