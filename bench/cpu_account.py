"""Where the CPU of a server-mode benchmark goes, per process kind, and the throughput ceiling
it sets (bench/fair_share.py).

- the workers and everything they waited for (RQ work horses, git, bubblewrap, the validation
  commands): `RUSAGE_CHILDREN` of this process once the workers exited, split into the worker
  processes' own time and their children's from /proc/<pid>/stat just before they stop;
- this process (the web app and the fake GitHub, served from its threads, and the polling);
- redis-server, from its INFO.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

import redis

TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Cpu:
    """CPU seconds by where they were spent."""

    worker_own: float = 0.0  # the worker processes themselves (with SimpleWorker: the steps)
    worker_children: float = 0.0  # what they waited for: work horses, git, bwrap, validation
    this_process: float = 0.0  # the web app, the fake GitHub, the benchmark's polling
    redis: float = 0.0

    @property
    def total(self) -> float:
        return self.worker_own + self.worker_children + self.this_process + self.redis


def own_and_children(pid: int) -> tuple[float, float]:
    """(own, waited-for children's) CPU seconds of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / TICK
    children = (int(fields[13]) + int(fields[14])) / TICK
    return own, children


def _usage(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def redis_seconds(connection: redis.Redis) -> float:
    info = connection.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class Meter:
    """Start before the workers; `workers_stopping` with their pids just before stopping
    them; `finish` once they were waited for."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        self.children0 = _usage(resource.RUSAGE_CHILDREN)
        self.self0 = _usage(resource.RUSAGE_SELF)
        self.redis0 = redis_seconds(connection)
        self.split = (0.0, 0.0)

    def workers_stopping(self, pids: list[int]) -> None:
        own = children = 0.0
        for pid in pids:
            try:
                mine, theirs = own_and_children(pid)
            except (OSError, IndexError, ValueError):
                continue  # it exited already: its time is in RUSAGE_CHILDREN, unsplit
            own, children = own + mine, children + theirs
        self.split = (own, children)

    def finish(self) -> Cpu:
        workers = _usage(resource.RUSAGE_CHILDREN) - self.children0
        own, children = self.split
        unsplit = max(workers - own - children, 0.0)  # workers that exited before the split
        share = own / (own + children) if own + children else 0.5
        return Cpu(worker_own=own + unsplit * share, worker_children=children + unsplit * (1 - share),
                   this_process=_usage(resource.RUSAGE_SELF) - self.self0,
                   redis=redis_seconds(self.connection) - self.redis0)


def ceiling(workers: int, cores: int, wall_per_job_one_worker: float, cpu_per_job: float) -> float:
    """The best throughput ratio W workers / 1 worker can reach: W jobs run at once at most,
    and all of them together cannot use more than `cores` CPU seconds a second. One worker
    takes `wall_per_job_one_worker` a job (CPU and waits, one job at a time); W workers take at
    least max(that / W, cpu_per_job / cores) a job."""
    if cpu_per_job <= 0:
        return float(workers)
    return min(float(workers), cores * wall_per_job_one_worker / cpu_per_job)
