"""CI's port: the one question the CI feature asks of the outside world, the repository's CI
(`jobs.ports.CiForge`: its report on a commit, its failures' details, re-running them), taken
from the forge each mode wires; nothing else of the forge is within its reach."""

from __future__ import annotations

from jobs.engine.context import JobContext
from jobs.ports import CiForge


def ci_of(engine: JobContext) -> CiForge:
    """The job's CI, as the mode wired it (local mode's answers None: no CI)."""
    return engine.services.forge
