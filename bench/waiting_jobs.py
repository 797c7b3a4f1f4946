"""Benchmark 9 (issue 19): many open jobs waiting at gates cost (almost) nothing.

    .venv/bin/python -m bench.waiting_jobs [--jobs 1000] [--repos 100] [--batches 50]

A real redis-server; the fake GitHub in a process of its own (bench/waiting_world.py) with
`--repos` repositories (one issue per job), and `--jobs` job records at a shown milestone gate
written through the real RedisStore, each with `--batches` batches (one attempt, one
validation command's evidence) and three events a batch. Then, in this process (the
reconciler's, as a worker's work horse is in production):

1. the reconciler's pass (bot.server.reconciler.reconcile, comments read back with no grace)
   over them: its time and its Redis round trips (a pipeline counts once), median of the
   passes, and how many passes it takes until every waiting job's comments were read (the
   passes take turns: 1,000 / 50 = 20);
2. Redis memory per waiting job (MEMORY USAGE of its three keys), against 50 KB, with what
   each key holds;
3. the web app's acknowledgement while passes run back to back in a thread of this process:
   `stepwise serve` and the bare FastAPI app, each under uvicorn in its own process, loaded by
   bench/ack_load.py in a process of its own (open loop) at `--rate` for `--seconds`,
   alternating bare and app `--repeat` times; p99 ratio (medians) against 1.3.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from bench._common import ROOT, machine_facts, stepwise_env
from bench.ack_load import SECRET as ACK_SECRET
from bench.ack_servers import measure, targets, warm_up
from bot.plumbing.keys import batches_key, events_key, job_key
from bot.server.context import ServerContext
from bot.server.reconciler import MAX_JOBS_PER_PASS, reconcile
from bot.settings import Settings
from tests.kit.redis_server import running_redis

TARGET_PASS_S = 2.0
TARGET_KB = 50.0
TARGET_ACK = 1.3
PARTS = ("document", "batches", "events")


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


class World:
    """The fake GitHub and the job records, made and served by bench/waiting_world.py."""

    def __init__(self, process: subprocess.Popen[str], facts: dict[str, Any]) -> None:
        self.process, self.facts = process, facts
        self.ids: list[str] = list(facts["ids"])

    def comment_reads(self) -> int:
        """How many comment threads the App has read so far."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("reads\n")
        self.process.stdin.flush()
        return int(json.loads(self.process.stdout.readline())["reads"])


@contextlib.contextmanager
def world(work: Path, redis_url: str, jobs: int, repos: int, batches: int) -> Iterator[World]:
    argv = [sys.executable, "-m", "bench.waiting_world", "--redis-url", redis_url,
            "--root", str(work / "github"), "--jobs", str(jobs), "--repos", str(repos),
            "--batches", str(batches)]
    with (work / "world.log").open("w") as log:
        process = subprocess.Popen(argv, cwd=ROOT, env=stepwise_env(), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the fake GitHub's process failed: see {work / 'world.log'}")
        yield World(process, json.loads(line))
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def memory_kb(connection: redis.Redis, job_ids: list[str]) -> list[dict[str, float]]:
    """MEMORY USAGE of each job's three keys, in KB, by part."""
    sizes = []
    for job_id in job_ids:
        keys = (job_key(job_id), batches_key(job_id), events_key(job_id))
        sizes.append({part: int(connection.memory_usage(key, samples=0) or 0) / 1024
                      for part, key in zip(PARTS, keys, strict=True)})
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.waiting_jobs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--rate", type=int, default=100, help="webhook requests per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="per acknowledgement run")
    parser.add_argument("--repeat", type=int, default=1, help="bare/app runs alternated")
    parser.add_argument("--no-ack", action="store_true", help="skip the acknowledgement runs")
    options = parser.parse_args()
    jobs, repos = min(max(options.jobs, 1), 20_000), min(max(options.repos, 1), 1000)
    batches = min(max(options.batches, 1), 500)
    print(f"waiting jobs: {machine_facts()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="stepwise-bench-waiting-"))
    try:
        run(work, jobs, repos, batches, options)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, jobs: int, repos: int, batches: int, options: argparse.Namespace) -> None:
    with running_redis() as redis_url:
        started = time.monotonic()
        with world(work, redis_url, jobs, repos, batches) as fleet:
            print(f"{len(fleet.ids)} jobs at a shown gate in {repos} repositories, {batches} "
                  f"batches each, written in {time.monotonic() - started:.1f} s", flush=True)
            connection = CountingRedis.from_url(redis_url)
            settings = Settings(app_id=fleet.facts["app_id"],
                                private_key=fleet.facts["private_key"],
                                webhook_secret=ACK_SECRET, redis_url=redis_url,
                                github_api_url=fleet.facts["base_url"], workdir=work / "work")
            ctx = ServerContext.from_settings(settings, connection=connection)
            times, trips, passes, covered = [], [], 0, 0
            needed = -(-len(fleet.ids) // MAX_JOBS_PER_PASS)
            while passes < 4 * needed:  # the budget may stop a pass before its 50
                before_trips, begin = CountingRedis.trips, time.perf_counter()
                reconcile(ctx, comment_grace_s=0)
                times.append(time.perf_counter() - begin)
                trips.append(CountingRedis.trips - before_trips)
                passes += 1
                covered = fleet.comment_reads()
                if covered >= len(fleet.ids):
                    break
            sizes = memory_kb(connection, fleet.ids[:50])
            acks = {} if options.no_ack else acknowledgement(work, redis_url, ctx, options)
            report(len(fleet.ids), times, trips, passes, covered, sizes, batches, acks)
            connection.close()


def acknowledgement(work: Path, redis_url: str, ctx: ServerContext, options: argparse.Namespace
                    ) -> dict[str, float]:
    """Medians of the p99 of `stepwise serve` and of the bare app while reconciler passes run
    back to back in this process; the servers and the load generator have their own."""
    stop = threading.Event()
    pass_times: list[float] = []

    def passes() -> None:
        while not stop.is_set():
            begin = time.perf_counter()
            reconcile(ctx, comment_grace_s=0)
            pass_times.append(time.perf_counter() - begin)

    p99: dict[str, list[float]] = {"bare": [], "app": []}
    errors = {"bare": 0, "app": 0}
    with targets(work, redis_url) as servers:
        warm_up(servers, client_kind="raw", connection=ctx.redis)
        thread = threading.Thread(target=passes, daemon=True)
        thread.start()
        try:
            for round_ in range(max(options.repeat, 1)):
                order = list(servers.items())
                for name, server in order if round_ % 2 == 0 else reversed(order):
                    result = measure(server, name, options.rate, options.seconds,
                                     client_kind="raw", connection=ctx.redis)
                    p99[name].append(result.p99)
                    errors[name] += result.errors
        finally:
            stop.set()
            thread.join(timeout=60)
    return {"app": statistics.median(p99["app"]), "bare": statistics.median(p99["bare"]),
            "app errors": errors["app"], "bare errors": errors["bare"],
            "rate": options.rate, "passes": len(pass_times),
            "pass s": statistics.median(pass_times) if pass_times else float("nan")}


def report(jobs: int, times: list[float], trips: list[int], passes: int, covered: int,
           sizes: list[dict[str, float]], batches: int, acks: dict[str, float]) -> None:
    print()
    median = statistics.median(times)
    print(f"reconciler pass over {jobs} waiting jobs: median {median:.2f} s, max "
          f"{max(times):.2f} s over {len(times)} passes (target < {TARGET_PASS_S:g} s): "
          f"{'met' if max(times) < TARGET_PASS_S else 'MISSED'}")
    print(f"Redis round trips per pass: median {statistics.median(trips):.0f}, max {max(trips)} "
          f"(bounded: the three sets of bot/plumbing/idle_index.py, the documents of at most "
          f"{MAX_JOBS_PER_PASS} jobs a pass, and a few for each of them)")
    print(f"every waiting job's comments read after {passes} passes: {covered}/{jobs} "
          f"({'all' if covered >= jobs else 'NOT all'})")
    totals = [sum(size.values()) for size in sizes]
    kb = statistics.mean(totals)
    parts = ", ".join(f"{part} {statistics.mean(s[part] for s in sizes):.1f}" for part in PARTS)
    print(f"Redis memory per waiting job of {batches} batches: {kb:.1f} KB (max "
          f"{max(totals):.1f}; {parts}) (target < {TARGET_KB:g} KB): "
          f"{'met' if kb < TARGET_KB else 'MISSED'}")
    if not acks:
        return
    ratio = acks["app"] / acks["bare"]
    print(f"acknowledgement p99 at {acks['rate']:.0f}/s while passes run ({acks['passes']:.0f} "
          f"passes, median {acks['pass s']:.2f} s): app {acks['app']:.1f} ms, bare "
          f"{acks['bare']:.1f} ms, ratio {ratio:.2f} (target <= {TARGET_ACK}): "
          f"{'met' if ratio <= TARGET_ACK else 'MISSED'}; errors app {acks['app errors']:.0f}, "
          f"bare {acks['bare errors']:.0f}")


if __name__ == "__main__":
    main()
