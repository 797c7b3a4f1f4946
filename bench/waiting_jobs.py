"""Benchmark 9 (issue 19): many open jobs waiting at gates cost (almost) nothing.

    .venv/bin/python -m bench.waiting_jobs [--jobs 1000] [--repos 100] [--batches 50]

A real redis-server; `--jobs` job records at a shown milestone gate across `--repos`
repositories of the fake GitHub (one issue each), written through the real RedisStore, each
with `--batches` batches (one attempt, one validation command's evidence) and three events a
batch. Then:

1. the reconciler's pass (bot.server.reconciler.reconcile, comments read back with no grace)
   over them: its time and its Redis round trips (a pipeline counts once), median of the
   passes, and how many passes it takes until every waiting job's comments were read (the
   passes take turns: 1,000 / 50 = 20);
2. Redis memory per waiting job (MEMORY USAGE of its three keys), against 50 KB;
3. the web app's acknowledgement while passes run back to back in a thread of this process:
   `stepwise serve` against the bare FastAPI app (bench/webhook_ack.py's load, open loop) at
   `--rate` for `--seconds`, p99 ratio against 1.3.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import redis

from bench._common import STEPWISE, free_port, machine_facts, server_process, stepwise_env
from bench.webhook_ack import SECRET as ACK_SECRET
from bench.webhook_ack import delivery_body, measure
from bot.server.context import ServerContext
from bot.server.keys import batches_key, events_key, job_key
from bot.server.reconciler import MAX_JOBS_PER_PASS, reconcile
from bot.server.redis_store import RedisStore
from bot.settings import Settings
from jobs.domain.job import Job, OpenGate
from jobs.domain.model import BatchStatus, Gate, JobStatus
from jobs.domain.records import Attempt, CommandEvidence, Event
from tests.kit.github import FakeGitHub
from tests.kit.records import make_batch, make_job
from tests.kit.redis_server import running_redis
from tests.kit.webhooks import sign

TARGET_PASS_S = 2.0
TARGET_KB = 50.0
TARGET_ACK = 1.3
NOW = datetime.now(UTC).replace(microsecond=0)


class CountingRedis(redis.Redis):
    """A Redis client that counts round trips: each command, or each pipeline's execute."""

    trips = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        CountingRedis.trips += 1
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        def counted(raise_on_error: bool = True) -> Any:
            CountingRedis.trips += 1
            return execute(raise_on_error)

        pipe.execute = counted  # type: ignore[method-assign]
        return pipe


def waiting_job(repo: str, number: int, batches: int, installation_id: int) -> Job:
    evidence = CommandEvidence(argv=["python", "-m", "pytest", "-q"], exit_code=0,
                               duration_s=3.2, output_tail="." * 60 + "\n42 passed in 3.1s\n",
                               output_lines=3, isolated=True)
    done = []
    for n in range(1, batches + 1):
        attempt = Attempt(number=1, started_at=NOW, finished_at=NOW + timedelta(seconds=4),
                          outcome="validated", edit_summary="1 replacement",
                          commands=[evidence], lines_added=1, lines_removed=1)
        done.append(make_batch(n, 1, files=[f"src/pkg{n % 7}/module_{n:04d}.py"],
                               status=BatchStatus.COMPLETED, targets=1, attempts=[attempt],
                               commit=f"{n:040x}", summary="old_total -> new_total"))
    events = [Event(at=NOW, kind=kind, message=f"batch {n} {kind}", batch=n)
              for n in range(1, batches + 1) for kind in ("attempt", "validated", "batch")]
    job = make_job(batches=done, status=JobStatus.AWAITING_HUMAN, number=number,
                   gate=OpenGate(id="milestone-1", kind=Gate.MILESTONE, opened_at=NOW,
                                 reason="milestone 1 of 2 is done", milestone=1, shown_at=NOW),
                   events=events)
    job.id = f"{repo.replace('/', '-')}-{number}"
    job.repo = repo
    job.server.installation_id = installation_id
    return job


def populate(gh: FakeGitHub, store: RedisStore, jobs: int, repos: int, batches: int) -> list[str]:
    ids: list[str] = []
    per_repo = max(jobs // repos, 1)
    for r in range(repos):
        repo = gh.add_repo(f"org{r % 10}", f"repo{r:03d}", {"README.md": "# r\n"})
        installation = next(i for i, inst in gh.installations.items()
                            if repo.full_name in inst.repos)
        for _ in range(per_repo):
            if len(ids) >= jobs:
                break
            number = gh.add_issue(repo, "Move callers", "body", user="maria")
            job = waiting_job(repo.full_name, number, batches, installation)
            store.save(job)
            ids.append(job.id)
    return ids


def comment_reads(gh: FakeGitHub) -> set[str]:
    return {r.path.split("?")[0] for r in gh.requests
            if r.method == "GET" and r.path.split("?")[0].endswith("/comments")}


def memory_kb(connection: redis.Redis, job_ids: list[str]) -> list[float]:
    sizes = []
    for job_id in job_ids:
        total = sum(int(connection.memory_usage(key, samples=0) or 0)
                    for key in (job_key(job_id), batches_key(job_id), events_key(job_id)))
        sizes.append(total / 1024)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.waiting_jobs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--rate", type=int, default=100, help="webhook requests per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="per acknowledgement run")
    options = parser.parse_args()
    jobs, repos = min(max(options.jobs, 1), 20_000), min(max(options.repos, 1), 1000)
    batches = min(max(options.batches, 1), 500)
    print(f"waiting jobs: {machine_facts()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="stepwise-bench-waiting-"))
    try:
        run(work, jobs, repos, batches, options.rate, options.seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, jobs: int, repos: int, batches: int, rate: int, seconds: float) -> None:
    with running_redis() as redis_url, FakeGitHub(root=work / "github") as gh:
        connection = CountingRedis.from_url(redis_url)
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret=ACK_SECRET, redis_url=redis_url,
                            github_api_url=gh.base_url, workdir=work / "work")
        ctx = ServerContext.from_settings(settings, connection=connection)
        started = time.monotonic()
        ids = populate(gh, ctx.store, jobs, repos, batches)
        print(f"{len(ids)} jobs at a shown gate in {repos} repositories, {batches} batches each,"
              f" written in {time.monotonic() - started:.1f} s", flush=True)
        times, trips, passes = [], [], 0
        covered: set[str] = set()
        needed = -(-len(ids) // MAX_JOBS_PER_PASS)
        while passes < 4 * needed:  # the budget may stop a pass before its 50
            before_trips, begin = CountingRedis.trips, time.perf_counter()
            reconcile(ctx, comment_grace_s=0)
            times.append(time.perf_counter() - begin)
            trips.append(CountingRedis.trips - before_trips)
            passes += 1
            covered = comment_reads(gh)
            if len(covered) >= len(ids):
                break
        sizes = memory_kb(connection, ids[:50])
        acks = acknowledgement(work, redis_url, ctx, rate, seconds)
        report(len(ids), times, trips, passes, len(covered), sizes, batches, acks)
        connection.close()


def acknowledgement(work: Path, redis_url: str, ctx: ServerContext, rate: int, seconds: float
                    ) -> dict[str, float]:
    """p99 of `stepwise serve` and of the bare app while reconciler passes run back to back."""
    import sys

    from tests.kit.github_auth import shared_app_key

    app_port, bare_port = free_port(), free_port()
    env = stepwise_env(app_id=1, private_key=shared_app_key()[0], webhook_secret=ACK_SECRET,
                       redis_url=redis_url, github_api_url="http://127.0.0.1:9",
                       workdir=work / "serve", host="127.0.0.1", port=app_port)
    body = delivery_body()
    signature = sign(ACK_SECRET, body)
    stop = threading.Event()

    def passes() -> None:
        while not stop.is_set():
            reconcile(ctx, comment_grace_s=0)

    p99: dict[str, float] = {}
    with server_process([str(STEPWISE), "serve"], env, app_port, work / "app.log") as app, \
            server_process([sys.executable, "-m", "bench._common", "bare", "--port",
                            str(bare_port)], env, bare_port, work / "bare.log") as bare:
        for name, server in (("bare", bare), ("app", app)):
            measure(server, name, 200, 1.0, body, signature, client_kind="raw",
                    connection=ctx.redis, warm=True)
        thread = threading.Thread(target=passes, daemon=True)
        thread.start()
        try:
            for name, server in (("bare", bare), ("app", app)):
                result = measure(server, name, rate, seconds, body, signature,
                                 client_kind="raw", connection=ctx.redis)
                p99[name] = result.p99
                p99[f"{name} errors"] = float(result.errors)
        finally:
            stop.set()
            thread.join(timeout=60)
    p99["rate"] = rate
    return p99


def report(jobs: int, times: list[float], trips: list[int], passes: int, covered: int,
           sizes: list[float], batches: int, acks: dict[str, float]) -> None:
    print()
    median = statistics.median(times)
    print(f"reconciler pass over {jobs} waiting jobs: median {median:.2f} s, max "
          f"{max(times):.2f} s over {len(times)} passes (target < {TARGET_PASS_S:g} s): "
          f"{'met' if max(times) < TARGET_PASS_S else 'MISSED'}")
    print(f"Redis round trips per pass: median {statistics.median(trips):.0f}, max {max(trips)} "
          f"(bounded: documents {jobs // 200 + 1} pipelines + at most {MAX_JOBS_PER_PASS} jobs "
          "a pass, a few each)")
    print(f"every waiting job's comments read after {passes} passes: {covered}/{jobs} "
          f"({'all' if covered >= jobs else 'NOT all'})")
    kb = statistics.mean(sizes)
    print(f"Redis memory per waiting job of {batches} batches: {kb:.1f} KB (max {max(sizes):.1f})"
          f" (target < {TARGET_KB:g} KB): {'met' if kb < TARGET_KB else 'MISSED'}")
    ratio = acks["app"] / acks["bare"]
    print(f"acknowledgement p99 at {acks['rate']:.0f}/s while passes run: app "
          f"{acks['app']:.1f} ms, bare {acks['bare']:.1f} ms, ratio {ratio:.2f} "
          f"(target <= {TARGET_ACK}): {'met' if ratio <= TARGET_ACK else 'MISSED'}; errors app "
          f"{acks['app errors']:.0f}, bare {acks['bare errors']:.0f}")


if __name__ == "__main__":
    main()
