"""The base_moves feature's entry in the features' tuple (jobs/composition.py)."""

from __future__ import annotations

from jobs.domain.job import Job
from jobs.engine.context import Feature
from jobs.features.base_moves.merge import update_from_base
from jobs.features.base_moves.parts import PARTS


def follows_a_base(job: Job) -> bool:
    """Whether the safe-point hook can have anything to do for `job`: it started from a branch
    of its own base (not a detached HEAD, not its own branch) and either merges the moved base
    (`update_from_base` is not `never`) or has a merge or a conflict of the base on record to
    keep in step with its branch (a merge that never landed, a conflict a maintainer resolved)."""
    if job.base_branch in ("HEAD", job.branch):
        return False
    return (job.config.update_from_base != "never" or bool(job.base_merges)
            or job.base_conflict is not None)


FEATURE = Feature("base_moves", active=follows_a_base, safe_point=update_from_base, parts=PARTS)
