"""The check runs' port: sending one of Stepwise's own runs (`jobs.ports.CheckRunPublisher`),
taken from the forge the server wires; nothing else of the forge is within its reach."""

from __future__ import annotations

from jobs.engine.context import JobContext
from jobs.ports import CheckRunPublisher


def check_runs_of(engine: JobContext) -> CheckRunPublisher:
    return engine.services.forge
