"""Job environments as a feature of the loop: its entry in the features' tuple
(jobs/composition.py)."""

from __future__ import annotations

from jobs.engine.context import Feature, JobContext
from jobs.features.environments.build import prepare_job_environment
from jobs.features.environments.parts import PARTS
from jobs.inputs.sandboxing import EnvironmentLayer, SandboxPolicy
from jobs.kernel.job import Job
from jobs.kernel.records import CommandEvidence


def environment(engine: JobContext, policy: SandboxPolicy,
                ) -> tuple[EnvironmentLayer | None, CommandEvidence | None]:
    """The job's environment from the wired cache, or built now by `setup` (recorded on the
    job); the failing setup command when it fails."""
    cache = engine.services.environments
    assert cache is not None  # the engine asks only when a cache is wired
    outcome = prepare_job_environment(engine.job, repository=engine.services.repository,
                                      cache=cache, sandbox=engine.services.sandbox,
                                      policy=policy)
    return outcome.environment, outcome.failure


def active(job: Job) -> bool:
    """A job whose repository config has `setup` commands."""
    return bool(job.config.setup)


FEATURE = Feature(name="environments", active=active, environment=environment, parts=PARTS)
