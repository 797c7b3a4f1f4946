"""The whole chaos installation: redis-server, the workers, the fake GitHub and the web app
served by uvicorn, and what a scenario does to it (new repositories, labels, comments)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import redis
import uvicorn
from rq import Worker
from rq.registry import ScheduledJobRegistry

from bot.plumbing.keys import lease_key
from bot.plumbing.queue import queue
from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.kernel.job import Job
from tests.kit.chaos.github import ChaosGitHub
from tests.kit.chaos.killing import parent_of
from tests.kit.chaos.redis_proc import RedisServer
from tests.kit.chaos.settings import (
    FILES,
    MAINTAINER,
    RECONCILE_INTERVAL_S,
    SCHEDULER_LOCK,
    SECRET,
    SHORT,
    WORKERS,
)
from tests.kit.chaos.workers import WorkerProc, Workers
from tests.kit.github_model import FakeRepo
from tests.kit.maintainer import comment_event, maintained_repo
from tests.kit.redis_server import free_port
from tests.kit.webhooks import deliver, make_event


@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True, name="chaos-web")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class Cluster:
    """Redis, the fake GitHub, the web app and the workers; one repository per trial."""

    def __init__(self, root: Path, gh: ChaosGitHub, server: RedisServer, url: str,
                 workers: Workers, files: int) -> None:
        self.root, self.gh, self.redis_server, self.web_url = root, gh, server, url
        self.workers, self.files = workers, files
        self.redis = redis.Redis.from_url(server.url, socket_timeout=5)
        self.store = RedisStore(self.redis)
        self.repos = 0
        self.reconcile_s = float(RECONCILE_INTERVAL_S)

    def new_repo(self, label: str, *, require_plan_approval: bool = False,
                 batches_per_milestone: int | None = None) -> FakeRepo:
        self.repos += 1
        return maintained_repo(self.gh, f"{label}-{self.repos:02d}", files=self.files, labels=(),
                               require_plan_approval=require_plan_approval,
                               batches_per_milestone=batches_per_milestone)

    def post(self, event: str, payload: dict[str, Any], *, delivery_id: str,
             copies: int = 1) -> list[int]:
        """Deliver `copies` identical requests at once (one X-GitHub-Delivery). A 5xx answer is
        redelivered a second later, as a maintainer would from the App's delivery log."""
        statuses: list[int] = [0] * copies

        def send(index: int) -> None:
            for _ in range(30):
                try:
                    response = deliver(self.web_url, event, payload, secret=SECRET,
                                       delivery_id=delivery_id)
                    statuses[index] = response.status_code
                    if response.status_code < 500:
                        return
                except httpx.HTTPError:
                    statuses[index] = -1
                time.sleep(1)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(copies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return statuses

    def label(self, repo: FakeRepo, *, copies: int = 1) -> list[int]:
        payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                             label="stepwise")
        return self.post("issues", payload, delivery_id=label_delivery(repo), copies=copies)

    def comment(self, repo: FakeRepo, body: str, *, number: int = 1, copies: int = 1,
                redeliveries: int = 0) -> int:
        """A maintainer comments; the event is delivered `copies` times at once under one delivery
        id, then again under `redeliveries` more ids (the same comment seen again)."""
        posted = self.gh.add_comment(repo, number, body, user=MAINTAINER)
        payload = comment_event(repo, posted, number=number)
        for round_ in range(1 + redeliveries):
            self.post("issue_comment", payload, delivery_id=f"comment-{posted.id}-{round_}",
                      copies=copies)
        return posted.id

    def job(self, repo: FakeRepo) -> Job | None:
        try:
            return self.store.find(repo.full_name, 1)
        except (redis.RedisError, ValueError):
            return None

    def ensure_workers(self) -> list[tuple[WorkerProc, int, str]]:
        return self.workers.ensure(WORKERS)

    def scheduler_holder(self) -> tuple[str, WorkerProc | None]:
        """Who holds RQ's scheduler lock (one worker runs the scheduler for the queue)."""
        try:
            name = self.redis.get(SCHEDULER_LOCK)
            if not name:
                return "nobody", None
            pid = self.redis.hget(f"rq:scheduler:{as_text(name)}", "pid")
        except redis.RedisError:
            return "unknown (Redis unreachable)", None
        try:
            worker_pid = parent_of(int(pid or 0))
        except (OSError, ValueError, IndexError):
            return "a dead process", None
        proc = next((p for p in self.workers.procs if p.pid == worker_pid), None)
        return (f"worker {proc.number}", proc) if proc else ("a dead process", None)

    def wait_ready(self, timeout: float = 20.0, *, scheduler: bool = False) -> None:
        """Both workers registered with RQ (and, with `scheduler`, one of them running RQ's
        scheduler, as it does in a fresh installation)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                live = {p.pid for p in self.workers.alive()}
                registered = {w.pid for w in Worker.all(queue=queue(self.redis))} & live
                if len(registered) >= WORKERS and (
                        not scheduler or self.scheduler_holder()[1] is not None):
                    return
            time.sleep(0.05)

    def diagnose(self, job: Job | None) -> str:
        """Why a job may be stuck: its lease, what is queued or scheduled, RQ's scheduler."""
        try:
            q = queue(self.redis)
            scheduled = ScheduledJobRegistry(queue=q).get_job_ids()  # type: ignore[no-untyped-call]
            queued = q.get_job_ids()
            lease = bool(job and self.redis.exists(lease_key(job.id)))
        except redis.RedisError as exc:
            return f"Redis unreachable: {exc}"
        ours = [i for i in scheduled if job and job.id in i]
        reaps = [i for i in scheduled if i.startswith("reap")]
        return (f"lease {'held' if lease else 'free'}; {len(queued)} queued; scheduled: "
                f"{len(ours)} for this job, {len(reaps)} reaper round(s); RQ scheduler lock "
                f"held by {self.scheduler_holder()[0]}")


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def label_delivery(repo: FakeRepo) -> str:
    return f"label-{repo.name}"


@contextlib.contextmanager
def open_cluster(base: Path | None = None, *, files: int = FILES,
                 timings: dict[str, str] | None = None) -> Iterator[Cluster]:
    """A fresh installation: Redis, fake GitHub, web app, two workers. Its files are removed
    afterwards unless `base` is given (then the worker logs stay under base/logs)."""
    root = Path(tempfile.mkdtemp(prefix="stepwise-chaos-", dir=base))
    server = RedisServer(root / "redis")
    server.start()
    workers: Workers | None = None
    try:
        with ChaosGitHub(root=root / "github") as fake:
            gh = cast(ChaosGitHub, fake)
            env = {**os.environ,
                   "STEPWISE_APP_ID": str(gh.app_id), "STEPWISE_PRIVATE_KEY": gh.private_key_pem,
                   "STEPWISE_WEBHOOK_SECRET": SECRET, "STEPWISE_REDIS_URL": server.url,
                   "STEPWISE_GITHUB_API_URL": gh.base_url,
                   "STEPWISE_WORKDIR": str(root / "work"),
                   **(timings or SHORT),
                   "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
            settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                                webhook_secret=SECRET, redis_url=server.url,
                                github_api_url=gh.base_url, workdir=root / "work")
            logs = root / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            workers = Workers(env, logs)
            with served(create_app(settings, redis.Redis.from_url(server.url))) as url:
                cluster = Cluster(root, gh, server, url, workers, files)
                cluster.reconcile_s = float((timings or SHORT)["STEPWISE_RECONCILE_INTERVAL_S"])
                cluster.ensure_workers()
                cluster.wait_ready(scheduler=True)
                yield cluster
    finally:
        if workers is not None:
            workers.stop_all()
        server.stop()
        if base is None:
            shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def using(cluster: Cluster | None, base: Path | None, files: int) -> Iterator[Cluster]:
    """`cluster` when given (its workers made whole again), else a fresh one."""
    if cluster is None:
        with open_cluster(base, files=files) as fresh:
            yield fresh
        return
    cluster.ensure_workers()
    cluster.wait_ready()
    yield cluster
