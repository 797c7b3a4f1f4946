"""base_moves' port: the one question it asks of the forge, whether the base branch's protection
requires a branch to be up to date before it merges (`strict`), asked through CI's port
(`jobs.ports.CiForge`, the part of the forge the CI feature reaches too) and nothing wider."""

from __future__ import annotations

from jobs.engine.context import JobContext
from jobs.ports import CiForge


def requires_up_to_date(engine: JobContext) -> bool:
    """Whether the base branch requires branches to be up to date (local mode: no CI, False)."""
    ci: CiForge = engine.services.forge
    report = ci.ci_report(engine.job, engine.job.head_sha)
    return bool(report and report.strict)
