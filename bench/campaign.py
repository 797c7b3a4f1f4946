"""Benchmark: a campaign through the App against the fake GitHub (issue 32).

    .venv/bin/python -m bench.campaign [--repos 20] [--broken 2] [--records 50,500,1000]

Part 1, the record and the dashboard (pure): for each size in `--records`, the record's
bytes, the dashboard's characters (always under GitHub's 65,536) and the time to render it,
and the cost of one repository event (its entry updated and the rules applied), printed as a
ratio against the smallest size.

Part 2, through the App: `--repos` generated repositories (`--broken` of them with a test the
change breaks) on the loopback fake GitHub, a real redis-server and bubblewrap, the worker's
real handlers run in this process (one worker, burst): the label's preview (wall time, GitHub
calls per repository), then `approve all` until every healthy repository's job has completed
(wall time, GitHub calls per repository, dashboard edits against repository events: edits are
coalesced to at most one per tick), and whether the halt fired during the canary wave.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import redis
from rq import SimpleWorker

from bench._common import machine_facts
from bot.events import Event, Kind
from bot.server.campaigns import record_store
from bot.server.campaigns.tasks import start_campaign, steer_campaign, tick_all
from bot.server.context import ServerContext
from bot.server.handlers import handlers
from bot.server.worker import install_handlers, queue
from bot.settings import Settings
from jobs.adapters.sandbox import make_sandbox
from jobs.domain.config import RepoConfig
from jobs.features.campaigns.dashboard import BODY_LIMIT, render_dashboard
from jobs.features.campaigns.port import JobView, record_view
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.rollout import settle
from jobs.features.campaigns.settings import CampaignSettings
from tests.kit.campaign_repos import CONFIG, service_files
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis

NOW = datetime.now(UTC)
OWNER = "bench-org"
ISSUE = """Move every service to new().

```stepwise
recipe: replace
paths: ["app/user.py"]
find: ['\\bold\\b']
replace: 'new'
campaign:
  repositories: ["bench-org/svc-*"]
  canary: 2
  wave: 10
  halt_when_failing: {halt}
```
"""


def record_part(sizes: list[int]) -> None:
    print("Part 1: the record and the dashboard")
    print(f"{'repos':>6} {'record KB':>10} {'dashboard chars':>16} {'render ms':>10} "
          f"{'event µs':>9} {'event ratio':>12}")
    base = None
    for size in sizes:
        campaign = Campaign(id="bench", title="Move to new()", spec_digest="d", created_at=NOW,
                            updated_at=NOW, status=CampaignStatus.RUNNING)
        states = [RepoState.COMPLETED, RepoState.WAITING, RepoState.WORKING, RepoState.APPROVED]
        for index in range(size):
            name = f"{OWNER}/service-with-a-long-name-{index:04d}"
            campaign.repos[name] = RepoEntry(name=name, state=states[index % 4], files=12,
                                             targets=30, wave=index // 10, batches_total=3,
                                             gate="milestone", answer=f"/stepwise approve on {name}#1")
        started = time.perf_counter()
        body = render_dashboard(campaign)
        render_ms = (time.perf_counter() - started) * 1000
        settings, entries = CampaignSettings(), list(campaign.repos.values())
        rounds = 200
        started = time.perf_counter()
        for index in range(rounds):
            entry = entries[index % size]
            record_view(entry, JobView(state=RepoState.WAITING, batches_done=1, batches_total=3))
            settle(campaign, settings, NOW)
        event_us = (time.perf_counter() - started) / rounds * 1e6
        base = base or event_us
        assert len(body) <= BODY_LIMIT
        print(f"{size:>6} {len(campaign.model_dump_json()) / 1024:>10.1f} {len(body):>16} "
              f"{render_ms:>10.1f} {event_us:>9.0f} {event_us / base:>12.2f}")


def app_part(repos: int, broken: int, halt: float) -> None:
    print(f"\nPart 2: through the App, {repos} repositories ({broken} broken), "
          f"halt_when_failing {halt}")
    with tempfile.TemporaryDirectory() as tmp, running_redis() as url, \
            FakeGitHub(root=Path(tmp) / "github") as gh:
        connection = redis.Redis.from_url(url)
        control = gh.add_repo(OWNER, "control", {"README.md": "# control\n"})
        for index in range(repos):
            gh.add_repo(OWNER, f"svc-{index:03d}", service_files(broken=index < broken),
                        config=CONFIG)
            gh.set_permission(f"{OWNER}/svc-{index:03d}", "maria", "maintain")
        gh.set_permission(control.full_name, "maria", "maintain")
        number = gh.add_issue(control, "Move every service to new()", ISSUE.format(halt=halt),
                              user="maria")
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret="bench-secret-" + uuid.uuid4().hex, redis_url=url,
                            github_api_url=gh.base_url, workdir=Path(tmp) / "work",
                            app_slug="stepwise")
        ctx = ServerContext.from_settings(settings, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        install_handlers(handlers(ctx))
        inst = next(i for i, x in gh.installations.items() if control.full_name in x.repos)

        def event(kind: Kind, **fields: object) -> Event:
            return Event(kind=kind, delivery_id=uuid.uuid4().hex, repo=control.full_name,
                         installation_id=inst, number=number, sender="maria", **fields)

        calls = len(gh.requests)
        started = time.perf_counter()
        start_campaign(ctx, event(Kind.LABELED, label="stepwise-campaign"), RepoConfig())
        preview_s = time.perf_counter() - started
        preview_calls = len(gh.requests) - calls
        print(f"preview: {preview_s:.1f} s, {preview_calls / repos:.1f} GitHub calls a repository")

        def body_edits() -> int:
            return sum(1 for r in gh.requests if r.method == "PATCH"
                       and r.path.endswith(f"/{control.full_name}/issues/{number}"))

        calls, edits_before, events = len(gh.requests), body_edits(), 0
        started = time.perf_counter()
        steer_campaign(ctx, event(Kind.COMMENT, body="/stepwise campaign approve all"),
                       "approve all")
        halted_in_canary = False
        for _ in range(200):
            SimpleWorker([queue(connection)], connection=connection).work(burst=True)
            before = {n: e.state for n, e in record_store.find(connection, control.full_name,
                                                               number).campaign.repos.items()}
            tick_all(ctx)
            doc = record_store.find(connection, control.full_name, number)
            assert doc is not None
            events += sum(1 for n, e in doc.campaign.repos.items() if before.get(n) != e.state)
            if doc.campaign.status is CampaignStatus.HALTED:
                halted_in_canary = halted_in_canary or doc.campaign.waves_started == 1
                steer_campaign(ctx, event(Kind.COMMENT, body="/stepwise campaign resume"),
                               "resume")
            healthy = [e for e in doc.campaign.entries() if e.state is not RepoState.LEFT_OUT
                       and not e.name.endswith(tuple(f"svc-{i:03d}" for i in range(broken)))]
            if all(e.state is RepoState.COMPLETED for e in healthy) and queue(connection).count == 0:
                break
        wall = time.perf_counter() - started
        done = sum(1 for e in doc.campaign.entries() if e.state is RepoState.COMPLETED)
        print(f"rollout: {done} of {repos} repositories completed in {wall:.1f} s "
              f"({wall / max(done, 1):.1f} s a repository, one in-process worker)")
        print(f"GitHub calls: {(len(gh.requests) - calls) / repos:.1f} a repository")
        saves = sum(job.version for e in doc.campaign.entries() if "#" in e.job
                    and (job := ctx.store.find(*_job_ref(e.job))) is not None)
        edits = body_edits() - edits_before
        print(f"dashboard edits: {edits} for {saves} saves of the repositories' jobs and {events} "
              f"state changes the ticks saw (edits per job save {edits / max(saves, 1):.2f})")
        print(f"halt fired during the canary wave: {'yes' if halted_in_canary else 'no'}")
        connection.close()


def _job_ref(handle: str) -> tuple[str, int]:
    repo, number = handle.rsplit("#", 1)
    return repo, int(number)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.campaign", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--broken", type=int, default=2)
    parser.add_argument("--halt", type=float, default=0.4)
    parser.add_argument("--records", default="50,500,1000")
    options = parser.parse_args()
    logging.getLogger("rq").setLevel(logging.WARNING)
    print(f"bench.campaign on {machine_facts()}")
    record_part([int(size) for size in options.records.split(",")])
    app_part(options.repos, options.broken, options.halt)


if __name__ == "__main__":
    main()
