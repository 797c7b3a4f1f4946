"""The chaos run's settings: the installation's names, the shortened and the production
timings, the limits a scenario is judged by."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from jobs.kernel.model import JobStatus

STEPWISE = Path(sys.executable).parent / "stepwise"
OWNER = "octo-org"
MAINTAINER = "maria"
SECRET = "chaos-webhook-s3cret"
FILES = 12
VALIDATE = "python -m unittest discover -s tests -q"
LEASE_TTL_S = 2
REAP_INTERVAL_S = 1
BACKOFF_S = (0.5, 1.0, 2.0)
RECONCILE_INTERVAL_S = 5
CALL_BACKOFF_S = (0.2, 0.4, 0.8)  # a call's own retries (GitHub's Retry-After: 1 s still counts)
SHORT = {"STEPWISE_LEASE_TTL_S": str(LEASE_TTL_S), "STEPWISE_REAP_INTERVAL_S": str(REAP_INTERVAL_S),
         "STEPWISE_BACKOFF_S": json.dumps(list(BACKOFF_S)),
         "STEPWISE_CALL_BACKOFF_S": json.dumps(list(CALL_BACKOFF_S)),
         "STEPWISE_RECONCILE_INTERVAL_S": str(RECONCILE_INTERVAL_S)}
# The defaults of bot/settings.py: lease 30 s, reaper and reconciler every 20 s, 5/15/45 s.
PRODUCTION = {"STEPWISE_LEASE_TTL_S": "30", "STEPWISE_REAP_INTERVAL_S": "20",
              "STEPWISE_BACKOFF_S": "[5, 15, 45]", "STEPWISE_RECONCILE_INTERVAL_S": "20"}
STUCK_TIMEOUT_S = 120.0
MAX_SLOWDOWN = 3.0  # time to finish under faults against the no-fault control
PRODUCTION_STUCK_S = 600.0  # with 30 s leases and 45 s backoffs, give a job longer
WORKERS = 2
SCHEDULER_LOCK = "rq:scheduler-lock:stepwise"
TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED})

Log = Callable[[str], None]


def quiet(_: str) -> None:
    return None
