"""Local mode's `stepwise approve --reload-config`: at the plan gate, read
`.github/stepwise.yml` again (the working tree's when it differs from the job's commit), plan
again with it (baseline included), and approve the new plan when its baseline passes."""

from __future__ import annotations

from jobs.engine import usecases
from jobs.engine.context import Outcome
from jobs.engine.start import local_config
from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate
from jobs.local import LocalSession, LocalWiring


def approve_with_reloaded_config(session: LocalSession) -> tuple[str, Outcome]:
    """Reload the config at the plan gate, re-plan, then approve unless the baseline still fails
    (the plan gate then stays open, saying why)."""
    with session.store.lock(session.number):
        job = session.load()
        config, source = local_config(session.services.repository, job.base_sha)
        wiring = LocalWiring(session)
        message = usecases.reload_config(wiring, job, config, source=source)
        job = session.load()
        gate = job.gate
        if gate is None or gate.kind is not Gate.PLAN or job.baseline_ok is False:
            return message, wiring.outcome
        approving = LocalWiring(session)
        message += "; " + usecases.steer(approving, job, Verb.APPROVE)
        return message, approving.outcome
