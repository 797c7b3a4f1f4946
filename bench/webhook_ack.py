"""Benchmark 1 (issue 6): webhook acknowledgement against the floor, in the same run.

    .venv/bin/python -m bench.webhook_ack [--seconds 10] [--rates 100,500]

Starts a real redis-server, `stepwise serve` (the real web app: bot.web.app.create_app under
uvicorn, in its own process, STEPWISE_* from the environment) and a bare FastAPI app whose one
POST route answers 202, served by the same uvicorn.run call in its own process
(bench/ack_servers.py). The load generator (bench/ack_load.py) is a third process: open loop,
latency from each request's due time, signed deliveries that the app enqueues. A short
warm-up (not measured) precedes each target's first run; bare and app runs alternate.

Nothing lost: every delivery the app answered 202 "queued" must have its dedupe key
`stepwise:delivery:<id>` in Redis and its RQ job `event-<id>` in the queue, and the queue must
hold exactly that many jobs.

Prints per rate and target: sent, ok (202), errors, p50, p99, max (ms), the CPU per request of
the server, of redis-server and of the generator, and the p99 ratio app/bare against the target
(<= 1.3, no errors). Exit status 0: it is a measurement.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

import redis

from bench._common import machine_facts
from bench.ack_load import Run, delivery_bodies
from bench.ack_servers import check_nothing_lost, measure, targets, warm_up
from tests.kit.redis_server import running_redis

TARGET_RATIO = 1.3


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.webhook_ack", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="per rate and target")
    parser.add_argument("--rates", default="100,500", help="requests per second, comma-separated")
    parser.add_argument("--repeat", type=int, default=1,
                        help="alternate bare/app runs this many times per rate; the ratio uses "
                        "the median p99 of each target (the machine is shared and noisy)")
    parser.add_argument("--app-workers", type=int, default=1,
                        help="`stepwise serve --workers N` (the bare app keeps one process)")
    parser.add_argument("--client", choices=("raw", "httpx"), default="raw",
                        help="load generator: raw asyncio HTTP/1.1 (default) or httpx")
    options = parser.parse_args()
    rates = [min(max(int(r), 1), 2000) for r in options.rates.split(",") if r.strip()]
    seconds = min(max(options.seconds, 1.0), 60.0)
    repeat = min(max(options.repeat, 1), 5)
    print(f"webhook acknowledgement: {machine_facts()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="stepwise-bench-ack-"))
    try:
        run_all(work, rates, seconds, repeat, options.client, app_workers=options.app_workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_all(work: Path, rates: list[int], seconds: float, repeat: int, client_kind: str, *,
            app_workers: int = 1) -> None:
    with running_redis() as redis_url:
        connection = redis.Redis.from_url(redis_url)
        with targets(work, redis_url, app_workers=app_workers) as servers:
            print(f"payload {len(delivery_bodies(1)[0])} bytes; {seconds:g} s per run; client "
                  f"{client_kind}; `stepwise serve`, the bare app and the load generator each "
                  "in its own process; latency from each request's due time", flush=True)
            runs: list[Run] = []
            warm = warm_up(servers, client_kind=client_kind, connection=connection)
            accepted = [delivery for run in warm for delivery in run.accepted]
            abandoned = sum(run.abandoned for run in warm)
            for rate in rates:
                for round_ in range(repeat):
                    order = list(servers.items())
                    for name, server in order if round_ % 2 == 0 else reversed(order):
                        run = measure(server, name, rate, seconds, client_kind=client_kind,
                                      connection=connection)
                        accepted += run.accepted
                        abandoned += run.abandoned
                        runs.append(run)
            fine, detail = check_nothing_lost(connection, accepted, abandoned)
        report(runs, fine, detail)
        connection.close()


def report(runs: list[Run], fine: bool, detail: str) -> None:
    print()
    print(f"{'rate/s':>6} {'target':<6} {'sent':>6} {'ok':>6} {'errors':>6} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'max ms':>8} {'cpu ms/req':>10} {'redis':>6} {'gen':>5} "
          f"{'gen lag ms':>10}")
    for run in runs:
        worst = max(run.latencies_ms, default=float("nan"))
        print(f"{run.rate:>6} {run.target:<6} {run.sent:>6} {run.ok:>6} {run.errors:>6} "
              f"{run.p50:>8.2f} {run.p99:>8.2f} {worst:>8.1f} {run.server_cpu_ms:>10.2f} "
              f"{run.redis_cpu_ms:>6.2f} {run.load_cpu_ms:>5.2f} {run.lag_ms:>10.1f}")
        if run.error_kinds:
            print(f"{'':>14}errors: {run.error_kinds}")
    print()
    met_all = fine
    for rate in sorted({run.rate for run in runs}):
        app = [run for run in runs if run.rate == rate and run.target == "app"]
        bare = [run for run in runs if run.rate == rate and run.target == "bare"]
        app_p99 = statistics.median(run.p99 for run in app)
        bare_p99 = statistics.median(run.p99 for run in bare)
        app_p50 = statistics.median(run.p50 for run in app)
        bare_p50 = statistics.median(run.p50 for run in bare)
        errors = sum(run.errors for run in app + bare)
        ratio = app_p99 / bare_p99 if bare_p99 > 0 else float("inf")
        met = ratio <= TARGET_RATIO and errors == 0
        met_all = met_all and met
        print(f"{rate:>4}/s  p99 ratio app/bare = {ratio:.2f}  (p50 ratio "
              f"{app_p50 / bare_p50:.2f}; errors {errors}; target <= {TARGET_RATIO}, no "
              f"errors): {'met' if met else 'MISSED'}")
    print("cpu ms/req: the server process's CPU per request (uvicorn + route); redis: "
          "redis-server's; gen: the load generator's; gen lag: the latest a request left "
          "after its due time")
    print(f"nothing lost: {'yes' if fine else 'NO'} ({detail})")
    print(f"target {'met' if met_all else 'missed'}")


if __name__ == "__main__":
    main()
