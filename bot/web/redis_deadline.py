"""The web app's Redis calls, off the event loop and under one total deadline.

A hung Redis (a partition without resets, a stopped process) answers nothing and refuses
nothing: a call on the event loop would stall every request of the process until its socket
timed out. Each piece of Redis work of a request runs instead on a small thread pool of its own
and is given up after the deadline (STEPWISE_WEB_REDIS_DEADLINE_S, 2 s): the webhook answers 503
with Retry-After, `/healthz` says Redis does not answer, both well within GitHub's 10 s. Work
still waiting for a thread when its deadline passes is dropped unstarted; a call already on the
wire ends with the client's socket timeout, which is the same deadline (bot.plumbing.connections).

`/healthz` has a pool of its own, so it never queues behind webhooks waiting on Redis.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
WEBHOOK_THREADS = 16  # Redis work of concurrent deliveries; more wait (and time out) in line
HEALTH_THREADS = 2


class RedisDeadlineExceeded(TimeoutError):
    """Redis did not finish the work within the deadline (hung, or every thread is waiting)."""


class RedisLane:
    """A thread pool for one kind of Redis work, each piece given up after `deadline_s`."""

    def __init__(self, name: str, *, threads: int, deadline_s: float) -> None:
        self.deadline_s = deadline_s
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)

    async def run(self, work: Callable[..., T], *args: object) -> T:
        """`work(*args)` on the lane's threads; RedisDeadlineExceeded once the deadline passes
        (Redis errors raised by `work` propagate as they are)."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()  # the delivery's log fields and trace go along
        future = loop.run_in_executor(self._pool, functools.partial(context.run, work, *args))
        try:
            return await asyncio.wait_for(future, timeout=self.deadline_s)
        except TimeoutError:
            raise RedisDeadlineExceeded(f"Redis did not answer within {self.deadline_s:g} s") \
                from None

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
