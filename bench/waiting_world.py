"""The world of benchmark 9 in a process of its own: the fake GitHub serving `--repos`
repositories of one issue per job, and `--jobs` job records at a shown milestone gate written
to Redis through the real RedisStore (bench/waiting_jobs.py starts it).

    .venv/bin/python -m bench.waiting_world --redis-url URL --root DIR [--jobs N] ...

It prints one JSON line (the fake's base URL, App id and key, the job ids), then serves until
its standard input closes; each line `reads` it is sent answers with how many issues' and
pull requests' comment threads the App has read so far (one JSON line).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job, OpenGate
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.kernel.records import Attempt, CommandEvidence, Event
from tests.kit.github import FakeGitHub
from tests.kit.records import make_batch, make_job

NOW = datetime.now(UTC).replace(microsecond=0)
PRIMARY_LIMIT = 10**9  # GitHub's primary limit lifted (see main)


def waiting_job(repo: str, number: int, batches: int, installation_id: int) -> Job:
    """A job at a shown milestone gate: `batches` completed batches, one attempt each with the
    validation command's evidence, three events a batch."""
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


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.waiting_world", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--batches", type=int, default=50)
    options = parser.parse_args()
    connection = redis.Redis.from_url(options.redis_url)
    with FakeGitHub(root=options.root) as gh:
        # The passes run back to back (about 300 in the acknowledgement runs, 50 comment reads
        # each), far past GitHub's 5,000 requests an hour an installation, which the fake
        # enforces: every read then failed 429 ("could not read a job's comments") and the
        # passes measured refusals. The reconciler's pace in production is one pass per interval.
        gh.rate_limits.primary_limit = PRIMARY_LIMIT
        ids = populate(gh, RedisStore(connection), options.jobs, options.repos, options.batches)
        print(json.dumps({"base_url": gh.base_url, "app_id": gh.app_id,
                          "private_key": gh.private_key_pem, "ids": ids}), flush=True)
        for line in sys.stdin:
            if line.strip() == "reads":
                print(json.dumps({"reads": len(comment_reads(gh))}), flush=True)
    connection.close()


if __name__ == "__main__":
    main()
