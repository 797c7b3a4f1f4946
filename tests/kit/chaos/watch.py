"""Watching a job until it settles: ended, at a gate whose comment is on GitHub, or stuck."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import redis

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.chaos.cluster import Cluster
from tests.kit.chaos.settings import TERMINAL
from tests.kit.github_model import FakeRepo


@dataclass
class Sample:
    at: float
    status: JobStatus
    finished: int


def finished_count(job: Job) -> int:
    return sum(b.status in (BatchStatus.COMPLETED, BatchStatus.SKIPPED, BatchStatus.REVERTED)
               for b in job.batches)


class Watch:
    """Samples the job's record every 50 ms, in a thread with its own connection."""

    def __init__(self, cluster: Cluster, repo: FakeRepo) -> None:
        self.repo = repo
        self.store = RedisStore(redis.Redis.from_url(cluster.redis_server.url, socket_timeout=2))
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="chaos-watch")

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            self.store.redis.close()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                job = self.store.find(self.repo.full_name, 1)
            except (redis.RedisError, ValueError):
                continue
            if job is not None:
                self.samples.append(Sample(time.monotonic(), job.status, finished_count(job)))

    def progress_after(self, moment: float, finished: int) -> float | None:
        """Seconds from `moment` to the first sample with more than `finished` batches
        finished, or the job at a gate or ended."""
        for sample in self.samples:
            if sample.at > moment and (sample.finished > finished or sample.status in TERMINAL
                                       or sample.status is JobStatus.AWAITING_HUMAN):
                return sample.at - moment
        return None


OnGate = Callable[[Job, int], bool]


def gate_visible(repo: FakeRepo, job: Job) -> bool:
    """Whether the open gate's comment exists on GitHub (the issue or the pull request), which
    is all a maintainer who reacts to what Stepwise posts can go by."""
    gate = job.gate
    if gate is None:
        return False
    needle = f"Waiting at gate `{gate.kind.value}` ({gate.id})"
    return any(needle in comment.body for issue in list(repo.issues.values())
               for comment in list(issue.comments))


def wait_until_settled(cluster: Cluster, repo: FakeRepo, *, timeout: float,
                       on_gate: OnGate | None = None, tick: Callable[[], None] | None = None,
                       answer_within_s: float = 20.0,
                       shown: dict[str, float] | None = None) -> Job | None:
    """Wait until the job ends, or stops at a gate nobody answers. `on_gate(job, answers so
    far)` may answer the open gate (returns True when it commented); a gate still open
    `answer_within_s` after an answer is offered to it again. With `shown`, a gate is offered
    only once its comment exists on GitHub, and `shown[gate id]` records the seconds from its
    opening to its comment appearing (a gate never shown is missing there)."""
    deadline = time.monotonic() + timeout
    answered: dict[str, float] = {}
    answers: Counter[str] = Counter()
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        job = cluster.job(repo)
        if job is not None and job.status in TERMINAL:
            return job
        if job is not None and job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
            gate = job.gate.id
            if shown is not None:
                if gate not in shown and gate_visible(repo, job):
                    shown[gate] = max(0.0, time.time() - job.gate.opened_at.timestamp())
                if gate not in shown:
                    time.sleep(0.1)  # nothing on GitHub yet: the maintainer sees nothing
                    continue
            if gate not in answered or time.monotonic() - answered[gate] > answer_within_s:
                if on_gate is None or not on_gate(job, answers[gate]):
                    return job
                answers[gate] += 1
                answered[gate] = time.monotonic()
                deadline = max(deadline, time.monotonic() + answer_within_s + 5)
        time.sleep(0.1)
    return cluster.job(repo)
