"""Which of RQ's worker classes runs the steps (`stepwise worker --worker-class`, or
STEPWISE_WORKER_CLASS): RQ's own choice of how a task runs, named as RQ's `--worker-class` names it.

- `rq.worker.SimpleWorker` (the default): each task runs in the worker process itself. What a
  step builds once stays built for the next one: the installation's GitHub client (its TLS
  context) and token, the store's knowledge of what it last wrote, imported modules. A worker
  killed mid-step is the same as a killed work horse: its lease expires and another worker's
  reaper resumes the job (docs/reliability.md).
- `rq.worker.Worker`: RQ forks a work horse per task (isolation from the step's memory
  growth, at the price of rebuilding those clients every step).

Any importable subclass of RQ's BaseWorker is accepted; anything else is refused with the fix.
"""

from __future__ import annotations

from rq.utils import import_worker_class
from rq.worker import BaseWorker

from jobs.basics.errors import BadInputError

DEFAULT_WORKER_CLASS = "rq.worker.SimpleWorker"
KNOWN = ("rq.worker.SimpleWorker", "rq.worker.Worker", "rq.worker.SpawnWorker")


def worker_class(name: str | None) -> type[BaseWorker]:
    """RQ's worker class of a dotted name (None or empty: the default)."""
    dotted = (name or "").strip() or DEFAULT_WORKER_CLASS
    try:
        return import_worker_class(dotted)
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise BadInputError(
            f"`{dotted}` is not an RQ worker class ({type(exc).__name__}: {str(exc)[:200]})",
            hint=f"name a subclass of rq.worker.BaseWorker by its dotted path, e.g. "
            f"{' or '.join(KNOWN[:2])} (STEPWISE_WORKER_CLASS, `--worker-class`)",
        ) from None
