"""The environments feature's part of the job record (pure): `Job.parts["environments"]`, what
`setup` built for the job, read with `EnvironmentRecord` (installed through parts.py's `PARTS`,
so a stored record is checked against it). Records written before the part existed kept it as
the job's field `environment`; `FORMER_FIELDS` reads that into the part. Others reach it through
the feature's hooks (`baseline_inputs`, `config_reloaded`), never this model."""

from __future__ import annotations

from typing import ClassVar

from jobs.kernel.job import Job
from jobs.kernel.record_parts import RecordPart
from jobs.kernel.records import CommandEvidence


class EnvironmentRecord(RecordPart):
    """The job's environment: its cache key, whether this job reused it, what setup left and
    the setup commands' evidence from the run that built it (no key: none built or tried)."""

    PART: ClassVar[str] = "environments"

    key: str = ""
    from_cache: bool = False
    entries: list[str] = []
    setup: list[CommandEvidence] = []
    rebuilt_because: list[str] = []  # what changed since the environment built before it
    failed: str = ""  # why setup failed to build it for this job (then nothing is cached)
    failed_before: str = ""  # what failed when an earlier job last tried to build this key


FORMER_FIELDS = {"environment": ""}  # the whole former field is the part


def environment_of(job: Job) -> EnvironmentRecord | None:
    """What `setup` built (or failed to build) for the job; None before it was first tried."""
    found = job.part(EnvironmentRecord)
    return found if found.key else None


def record_environment(job: Job, record: EnvironmentRecord | None) -> None:
    """Keep `record` as the job's environment (None: forget it, so the next step keys it anew)."""
    job.parts[EnvironmentRecord.PART] = record if record is not None else EnvironmentRecord()


def baseline_inputs(job: Job) -> dict[str, str]:
    """What a baseline's result depends on besides the tree and the commands: the environment
    it ran with (its key; "" without one)."""
    found = environment_of(job)
    return {"environment": found.key if found is not None else ""}


def config_reloaded(job: Job) -> None:
    """The config changed at the plan gate: the environment's key was made of the former one."""
    record_environment(job, None)
