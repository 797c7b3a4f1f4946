"""`python -m tests.kit.chaos`: the scenarios a plan asks for, run in order, their table
and the exit status."""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tests.kit.chaos.kills import run_kill, run_kill_label, run_kill_survivor
from tests.kit.chaos.results import HEADER, ScenarioResult, markdown_table, table_line
from tests.kit.chaos.scenarios import run_baseline, run_duplicates, run_faults, run_redis_restart
from tests.kit.chaos.settings import (
    BACKOFF_S,
    CALL_BACKOFF_S,
    FILES,
    LEASE_TTL_S,
    MAX_SLOWDOWN,
    PRODUCTION,
    PRODUCTION_STUCK_S,
    REAP_INTERVAL_S,
    RECONCILE_INTERVAL_S,
    STUCK_TIMEOUT_S,
    WORKERS,
    Log,
)


@dataclass
class Plan:
    kill_trials: int = 20
    redis_trials: int = 3
    survivor_trials: int = 4
    label_trials: int = 2
    fault_trials: int = 5
    duplicate_trials: int = 3
    faults_api: bool = True
    production: bool = True
    kills: bool = True  # baseline, kill, kill-survivor, kill-label, redis-restart


def run_all(plan: Plan, *, seed: int = 1, base: Path | None = None,
            log: Log = print) -> list[ScenarioResult]:
    results: list[ScenarioResult] = []
    if plan.kills:
        results.append(run_baseline(base=base, log=log))
        results[0].reference_s = results[0].finish_s
        first = results[0].trials[0]
        expected = first.seconds if first.completed else 15.0
        log(f"expected job duration (baseline): {expected:.1f} s")
        results.append(run_kill(plan.kill_trials, expected_s=expected, seed=seed, base=base,
                                log=log))
        if plan.survivor_trials:
            results.append(run_kill_survivor(plan.survivor_trials, expected_s=expected,
                                             seed=seed + 3, base=base, log=log))
        if plan.label_trials:
            results.append(run_kill_label(plan.label_trials, base=base, log=log))
        results.append(run_redis_restart(plan.redis_trials, expected_s=expected, seed=seed + 1,
                                         base=base, log=log))
    control = run_faults(1, rate=0.0, name="no-faults", base=base, log=log)
    results.append(control)
    faulted = [run_faults(plan.fault_trials, seed=seed + 2, base=base, log=log)]
    if plan.faults_api:
        faulted.append(run_faults(plan.fault_trials, seed=seed + 2, token_endpoint=False,
                                  base=base, log=log))
    if plan.production:
        faulted.append(run_faults(1, seed=seed + 5, name="faults-prod", timings=PRODUCTION,
                                  stuck_timeout_s=PRODUCTION_STUCK_S, base=base, log=log))
    for result in faulted:
        result.reference_s = control.finish_s
    results += faulted
    results.append(run_duplicates(plan.duplicate_trials, base=base, log=log))
    return results


def machine() -> str:
    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.kit.chaos",
                                     description="Stepwise chaos run (see tests/kit/chaos/__init__.py).")
    parser.add_argument("--trials", type=int, default=None, help="kill trials (default 20)")
    parser.add_argument("--quick", action="store_true",
                        help="3 kill trials, redis-restart, faults and duplicates once "
                        "(kill-survivor, kill-label and faults-api left out)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each installation's files and worker logs under this directory")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    parser.add_argument("--verbose", action="store_true", help="print a line per trial")
    parser.add_argument("--faults-only", action="store_true",
                        help="only no-faults, faults, faults-api, faults-prod and duplicates")
    args = parser.parse_args(argv)
    plan = Plan(kill_trials=3, redis_trials=1, survivor_trials=0, label_trials=0, fault_trials=1,
                duplicate_trials=1, faults_api=False, production=False) if args.quick else Plan()
    if args.trials is not None:
        plan.kill_trials = args.trials
    plan.kills = not args.faults_only
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"stepwise chaos run: {machine()}", flush=True)
    print(f"lease {LEASE_TTL_S} s, reaper every {REAP_INTERVAL_S} s, reconciler every "
          f"{RECONCILE_INTERVAL_S} s, backoff {list(BACKOFF_S)} s, call retries "
          f"{list(CALL_BACKOFF_S)} s, {WORKERS} workers, {FILES}-batch jobs, stuck after "
          f"{STUCK_TIMEOUT_S:.0f} s (faults-prod: the production settings {PRODUCTION})",
          flush=True)

    def log(text: str) -> None:
        if args.verbose or not text.startswith("  "):
            print(text, flush=True)

    results = run_all(plan, seed=args.seed, base=args.keep, log=log)
    print()
    print(HEADER)
    for result in results:
        print(table_line(result))
    print()
    for result in results:
        for note in result.notes:
            print(f"{result.name}: {note}")
        for trial in result.trials:
            if not args.verbose and (trial.other_duplicates or trial.lost or trial.stuck
                                     or not trial.completed):
                print(trial.line())
    if args.markdown:
        print()
        print(markdown_table(results))
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    failed = [r.name for r in results if not r.ok]
    if failed:
        print(f"FAILED: duplicates, lost batches, stuck jobs, late gates or a slowdown over "
              f"{MAX_SLOWDOWN:.0f}x in: {', '.join(failed)}")
        return 1
    print(f"OK: 0 duplicates, 0 lost batches, 0 stuck jobs, every gate left unpublished taken "
          f"up by a reconciler pass within one interval, faulted jobs within "
          f"{MAX_SLOWDOWN:.0f}x the no-fault control")
    return 0
