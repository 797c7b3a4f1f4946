"""Shared set-up of the CI engine tests (no tests here): the sample repository (real git, a
real unittest suite as validation), the in-memory forge playing the repository's CI, a clock
the test moves, and one call that advances the job as a worker step would."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.commands.registry import voice as server_voice
from jobs.adapters.sandbox import make_sandbox
from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.engine.context import Outcome, Services
from jobs.engine.engine import Engine
from jobs.engine.start import create_job
from jobs.features.check_runs.wiring import FEATURE as CHECK_RUNS
from jobs.features.ci.record import ci
from jobs.inputs.spec import IssueTask
from jobs.kernel.job import Job
from jobs.recipes.llm_settings import LlmSettings
from tests.kit.features import WITHOUT_BISECT
from tests.kit.forge import InMemoryForge
from tests.kit.local_e2e import CI_WORKFLOW, NUMBER, config_text, issue, sample_files
from tests.kit.repos import git, make_repo


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 12, 1, 12, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def pass_minutes(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


@dataclass
class CiRig:
    repo: Path
    services: Services
    forge: InMemoryForge
    clock: Clock

    @property
    def job(self) -> Job:
        job = self.services.store.load(NUMBER)
        assert job is not None
        return job

    def run(self, *, yes: bool = False, max_steps: int | None = None) -> Outcome:
        """One `run` (local) or one worker step's worth (`max_steps=1`) of the stored job."""
        return Engine(self.services, self.job, auto_approve=yes).run(max_steps=max_steps)

    def engine(self) -> Engine:
        return Engine(self.services, self.job)

    def head(self) -> str:
        return git(self.repo, "rev-parse", f"refs/heads/{self.job.branch}")

    def waiting_sha(self) -> str:
        wait = ci(self.job).wait
        assert wait is not None, f"the job does not wait for CI ({self.job.status})"
        return wait.sha


def rig(tmp_path: Path, *, ci: dict[str, Any] | None = None, has_ci: bool = True,
        workflows: bool = True, server: bool = True, task: IssueTask | None = None,
        llm: LlmSettings | None = None, extra_files: dict[str, str] | None = None,
        **config: Any) -> CiRig:
    """A job planned on the sample (3 batches of 2 files; 2 batches per milestone unless
    `config` says otherwise), not started yet; with `workflows`, the sample has a GitHub Actions
    workflow (what tells a repository with CI from one without)."""
    settings: dict[str, Any] = dict(config)
    if ci is not None:
        settings["ci"] = ci
    files = sample_files(config=config_text(**settings))
    files = {**files, **(CI_WORKFLOW if workflows else {}), **(extra_files or {})}
    repo = make_repo(tmp_path / "repo", files)
    repository = Repository(repo)
    forge = InMemoryForge(has_ci=has_ci)
    clock = Clock()
    services = Services(repository=repository, store=FileStore(repository.state_dir),
                        sandbox=make_sandbox(require_isolation=False), forge=forge, clock=clock,
                        llm=llm, voice=server_voice(),  # the CI rig plays server mode
                        features=(*WITHOUT_BISECT, CHECK_RUNS))  # and the server's check runs
    job = create_job(task or issue(), NUMBER, services)
    if server:
        job.server.installation_id = 1  # what a server job carries; the plan's CI line reads it
    services.store.save(job)
    return CiRig(repo, services, forge, clock)
