"""RQ's SimpleWorker for a test that works the queue in one burst and goes on (World.work)."""

from __future__ import annotations

from rq import SimpleWorker


class BurstWorker(SimpleWorker):
    """rq's SimpleWorker whose burst ends when the queue is empty, not up to a second later.

    At the end of `work()` rq unsubscribes from the worker's command channel, then stops the
    thread that listens on it and joins it for up to a second. The thread often reads the
    unsubscribe's reply before it is told to stop, so it waits for a new subscription (up to 60 s)
    and the join waits out its whole second, the thread left behind (6 of 10 bursts of an empty
    queue, rq 3.0, redis-py 8.1). Told to stop first, the thread ends on that reply. The worker,
    its command channel and its jobs are otherwise rq's own."""

    def unsubscribe(self) -> None:
        if self.pubsub_thread is not None:
            self.pubsub_thread.stop()
        super().unsubscribe()
