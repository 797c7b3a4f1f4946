"""Benchmark part 2 of bench/campaign.py: a campaign through the App with real RQ workers.

`--repos` generated repositories (`--broken` of them with a test the change breaks) on the
loopback fake GitHub, a real redis-server, and N `stepwise worker` processes (real RQ workers,
bubblewrap, the reconciler ticking the campaign every `--reconcile` seconds). The label's
preview and the `/stepwise campaign` commands run the worker's own handlers in this process;
every repository's job and every campaign tick runs in the workers. `--light` gives the healthy
repositories a trivial validation command (`python -c pass`: a lighter job, no test suite),
for the 500-repository run. Printed: the preview (wall time, GitHub calls a repository), the rollout
until every healthy repository's pull request is ready (wall time, GitHub calls a repository),
dashboard edits against the repositories' job saves, and whether the halt fired during the
canary wave.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis
from rq import Worker

from bot.events import Event, Kind
from bot.github.write_budget import is_content_creating
from bot.plumbing import campaign_store
from bot.plumbing.queue import queue
from bot.server.campaigns.tasks import start_campaign, steer_campaign
from bot.server.context import ServerContext
from bot.settings import Settings
from jobs.adapters.sandbox import make_sandbox
from jobs.features.campaigns.record import CampaignStatus, RepoState
from jobs.inputs.config import RepoConfig
from tests.kit.campaign_repos import CONFIG, service_files
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis

OWNER = "bench-org"
# A trivial validation command: the job still validates (baseline and batch), edits, commits
# and opens its pull request, but runs no test suite.
LIGHT_CONFIG = 'validate: ["python -c pass"]\nallow_commands: [python]\nci:\n  wait: off\n'
STEPWISE = Path(sys.executable).parent / "stepwise"
ISSUE = """Move every service to new().

```stepwise
recipe: replace
paths: ["app/user.py"]
find: ['\\bold\\b']
replace: 'new'
campaign:
  repositories: ["bench-org/svc-*"]
  canary: 2
  wave: {wave}
  max_open_prs: {repos}
  halt_when_failing: {halt}
```
"""


@dataclass(frozen=True)
class Run:
    repos: int
    broken: int
    workers: int
    halt: float = 0.4
    wave: int = 10
    light: bool = False
    reconcile_s: int = 2
    timeout_s: float = 1800.0


@contextlib.contextmanager
def workers(count: int, env: dict[str, str], logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`stepwise worker` processes, each the leader of its own process group (stopped with it)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for number in range(count):
            with (logs / f"worker-{number}.log").open("wb") as out:
                procs.append(subprocess.Popen([str(STEPWISE), "worker"], env=env, stdout=out,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def app_run(run: Run) -> None:
    print(f"\nThrough the App: {run.repos} repositories ({run.broken} broken"
          f"{', light jobs' if run.light else ''}), {run.workers} worker(s), wave {run.wave}, "
          f"halt_when_failing {run.halt}, reconciler every {run.reconcile_s} s")
    with tempfile.TemporaryDirectory() as tmp, running_redis() as url, \
            FakeGitHub(root=Path(tmp) / "github") as gh:
        connection = redis.Redis.from_url(url)
        control = gh.add_repo(OWNER, "control", {"README.md": "# control\n"})
        for index in range(run.repos):
            broken = index < run.broken
            gh.add_repo(OWNER, f"svc-{index:03d}", service_files(broken=broken),
                        config=CONFIG if broken or not run.light else LIGHT_CONFIG)
            gh.set_permission(f"{OWNER}/svc-{index:03d}", "maria", "maintain")
        gh.set_permission(control.full_name, "maria", "maintain")
        number = gh.add_issue(control, "Move every service to new()", ISSUE.format(
            halt=run.halt, wave=run.wave, repos=run.repos), user="maria")
        secret = "bench-secret-" + uuid.uuid4().hex
        work = Path(tmp) / "work"
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret=secret, redis_url=url, github_api_url=gh.base_url,
                            workdir=work, app_slug="stepwise")
        ctx = ServerContext.from_settings(settings, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        inst = next(i for i, x in gh.installations.items() if control.full_name in x.repos)

        def event(kind: Kind, **fields: object) -> Event:
            return Event(kind=kind, delivery_id=uuid.uuid4().hex, repo=control.full_name,
                         installation_id=inst, number=number, sender="maria", **fields)

        calls = len(gh.requests)
        started = time.perf_counter()
        start_campaign(ctx, event(Kind.LABELED, label="stepwise-campaign"), RepoConfig())
        preview_s = time.perf_counter() - started
        print(f"preview: {preview_s:.1f} s ({preview_s / run.repos:.2f} s a repository), "
              f"{(len(gh.requests) - calls) / run.repos:.1f} GitHub calls a repository")

        def body_edits() -> int:
            return sum(1 for r in gh.requests if r.method == "PATCH"
                       and r.path.endswith(f"/{control.full_name}/issues/{number}"))

        env = {**os.environ, "STEPWISE_APP_ID": str(gh.app_id),
               "STEPWISE_PRIVATE_KEY": gh.private_key_pem, "STEPWISE_WEBHOOK_SECRET": secret,
               "STEPWISE_REDIS_URL": url, "STEPWISE_GITHUB_API_URL": gh.base_url,
               "STEPWISE_WORKDIR": str(work), "STEPWISE_APP_SLUG": "stepwise",
               "STEPWISE_RECONCILE_INTERVAL_S": str(run.reconcile_s),
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        logs = Path(tmp) / "logs"
        logs.mkdir()
        healthy = {f"{OWNER}/svc-{i:03d}" for i in range(run.broken, run.repos)}
        with workers(run.workers, env, logs):
            while len(Worker.all(queue=queue(connection))) < run.workers:
                time.sleep(0.1)
            calls, edits_before = len(gh.requests), body_edits()
            started = time.perf_counter()
            steer_campaign(ctx, event(Kind.COMMENT, body="/stepwise campaign approve all"),
                           "approve all")
            halted_in_canary, resumed = False, 0
            while time.perf_counter() - started < run.timeout_s:
                time.sleep(0.5)
                doc = campaign_store.find(connection, control.full_name, number)
                assert doc is not None
                if doc.campaign.status is CampaignStatus.HALTED:
                    halted_in_canary = halted_in_canary or doc.campaign.waves_started == 1
                    resumed += 1
                    with contextlib.suppress(Exception):  # busy: the next poll resumes it
                        steer_campaign(ctx, event(Kind.COMMENT,
                                                  body="/stepwise campaign resume"), "resume")
                done = {e.name for e in doc.campaign.entries(RepoState.COMPLETED)}
                if healthy <= done:
                    break
            wall = time.perf_counter() - started
        done_count = len(healthy & done)
        print(f"rollout: {done_count} of {len(healthy)} healthy repositories' pull requests "
              f"ready in {wall:.1f} s ({wall / max(done_count, 1):.2f} s a repository, "
              f"{done_count / wall * 60:.1f} a minute)")
        print(f"GitHub calls: {(len(gh.requests) - calls) / run.repos:.1f} a repository")
        rollout = gh.requests[calls:]
        writes = sum(1 for r in rollout if is_content_creating(r.method, r.path))
        print(f"content-creating writes (GitHub's secondary limit counts them): {writes} in all, "
              f"{writes / run.repos:.1f} a campaign repository (tracking issue, job, PR, card, "
              "checks, note and the control issue's share)")
        saves = 0
        for entry in doc.campaign.entries():
            if "#" in entry.job:
                repo, job_number = entry.job.rsplit("#", 1)
                job = ctx.store.find(repo, int(job_number))
                saves += job.version if job is not None else 0
        edits = body_edits() - edits_before
        print(f"dashboard edits: {edits} for {saves} saves of the repositories' jobs "
              f"({edits / max(saves, 1):.3f} an event; at most one per campaign tick)")
        print(f"halt fired during the canary wave: {'yes' if halted_in_canary else 'no'} "
              f"(resumed {resumed} time(s))")
        connection.close()
