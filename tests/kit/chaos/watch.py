"""Watching a job until it settles: ended, at a gate whose comment is on GitHub, or stuck."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import redis

from bot.github.limited import LimitedUntil
from bot.plumbing.keys import github_limited_key, reconcile_task_id
from bot.plumbing.leases import lease_holder
from bot.plumbing.redis_store import RedisStore
from bot.server.steps import RECONCILER
from jobs.kernel import outbox
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
TICK_S = 0.1  # how often the maintainer looks (so a moment is seen up to this late)


@dataclass
class Owed:
    """A gate whose comment its step left unpublished: when the step let the job go (epoch
    seconds, or the end of GitHub's rate limit on the installation if later: no pass sends
    anything before) and how often the comment had been tried then."""

    left_at: float
    tries: int


PASS_HASH = f"rq:job:{reconcile_task_id()}"  # RQ keeps a pass's times until the next is queued


def last_pass(connection: redis.Redis) -> tuple[float, float] | None:
    """When the reconciler's last finished pass started and ended (epoch seconds), as RQ
    recorded them on its task; None while none has ended."""
    started, ended = connection.hmget(PASS_HASH, "started_at", "ended_at")
    if not started or not ended:
        return None
    return _epoch(started), _epoch(ended)


def _epoch(stamp: bytes) -> float:
    return datetime.strptime(stamp.decode(), "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=UTC).timestamp()


def follow_owed(cluster: Cluster, job: Job, owed: dict[str, Owed],
                taken_up: dict[str, float], *, shown: bool,
                ended_pass: tuple[float, float] | None = None,
                passed_by: set[str] | None = None) -> None:
    """For the open gate: note when its step let the job go with the comment unpublished (its
    lease free, the gate not `shown`), then when a reconciler pass takes it up (the pass holds
    the lease, a try more failed, or the comment is `shown`). `taken_up[gate id]`: seconds
    from the later of the step letting go and the end of GitHub's rate limit on the
    installation (no pass sends anything before, bot/github/limited.py) to the pass.
    `passed_by` gains the gate when `ended_pass` (the last finished pass's start and end)
    started after the gate was owed and after any rate limit, and did not take it up."""
    gate = job.gate
    if gate is None or gate.id in taken_up or (shown and gate.id not in owed):
        return
    entry = outbox.gate_waiting(job)
    tries = entry.tries if entry is not None else 0
    try:
        holder = lease_holder(cluster.redis, job.id)
        limited = LimitedUntil(cluster.redis, key=github_limited_key).until(
            str(job.server.installation_id))
    except redis.RedisError:
        return
    now = time.time()
    if gate.id not in owed:
        if holder is None:
            owed[gate.id] = Owed(max(now, limited), tries)
    elif shown or holder == RECONCILER or tries > owed[gate.id].tries:
        taken_up[gate.id] = max(0.0, now - owed[gate.id].left_at)
    elif passed_by is not None and ended_pass is not None \
            and ended_pass[0] > max(owed[gate.id].left_at, limited):
        passed_by.add(gate.id)


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
                       answer_within_s: float = 20.0, shown: dict[str, float] | None = None,
                       taken_up: dict[str, float] | None = None,
                       passed_by: set[str] | None = None) -> Job | None:
    """Wait until the job ends, or stops at a gate nobody answers. `on_gate(job, answers so
    far)` may answer the open gate (returns True when it commented); a gate still open
    `answer_within_s` after an answer is offered to it again. With `shown`, a gate is offered
    only once its comment exists on GitHub, and `shown[gate id]` records the seconds from its
    opening to its comment appearing (a gate never shown is missing there); with `taken_up`
    too, a gate whose step left its comment unpublished records how long it waited for a
    reconciler pass (`follow_owed`), and with `passed_by` the gates a whole pass ran past (it
    started after the gate was owed and ended without taking it up): the promise is the first
    pass after, however long a loaded machine or busy workers make it wait."""
    deadline = time.monotonic() + timeout
    answered: dict[str, float] = {}
    answers: Counter[str] = Counter()
    owed: dict[str, Owed] = {}
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        # The pass's end is read before the job: whatever a pass that ended wrote is then seen.
        ended_pass = last_pass(cluster.redis) if passed_by is not None else None
        job = cluster.job(repo)
        if job is not None and job.status in TERMINAL:
            return job
        if job is not None and job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
            gate = job.gate.id
            if shown is not None:
                if gate not in shown and gate_visible(repo, job):
                    shown[gate] = max(0.0, time.time() - job.gate.opened_at.timestamp())
                if taken_up is not None:
                    follow_owed(cluster, job, owed, taken_up, shown=gate in shown,
                                ended_pass=ended_pass, passed_by=passed_by)
                if gate not in shown:
                    time.sleep(TICK_S)  # nothing on GitHub yet: the maintainer sees nothing
                    continue
            if gate not in answered or time.monotonic() - answered[gate] > answer_within_s:
                if on_gate is None or not on_gate(job, answers[gate]):
                    return job
                answers[gate] += 1
                answered[gate] = time.monotonic()
                deadline = max(deadline, time.monotonic() + answer_within_s + 5)
        time.sleep(0.1)
    return cluster.job(repo)
