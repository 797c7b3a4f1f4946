"""CI as a verifier as a feature of the loop: its entry in the features' tuple
(jobs/composition.py) and what a split asks of it (jobs/features/bisect gets it there)."""

from __future__ import annotations

from jobs.engine.context import Feature
from jobs.features.ci import wait, withdraw
from jobs.features.ci.parts import PARTS

FEATURE = Feature(
    "ci", active=wait.active,  # a job that waits for CI, or will (server mode, `ci.wait` on)
    safe_point=wait.at_safe_point,  # while it waits, CI's verdict is the step
    after_push=wait.after_push,  # per_batch: the pushed batch waits for its checks
    adopt=wait.adopted,  # per_batch: an adopted batch commit waits for its checks too
    before_milestone_end=wait.before_milestone_end,  # per_milestone: the milestone head's
    after_revert=wait.after_revert,  # a revert at ci_failed waits for CI on the new head
    parts=PARTS)


class Candidates:
    """What a split asks of CI (jobs/features/bisect/by_ci.py `CiCandidates`): wait for CI on
    a candidate commit (the batch `awaiting_ci` meanwhile), take a judged candidate back off
    the branch."""

    begin = staticmethod(wait.begin_candidate)
    take_back = staticmethod(withdraw.take_back)


CANDIDATES = Candidates()
