"""Benchmark: a campaign's record and a campaign through the App against the fake GitHub
(issue 32).

    .venv/bin/python -m bench.campaign [--records 50,500,1000] [--repos 50,500] [--workers 2,4]
                                       [--broken 3] [--light 500] [--reconcile 2]

Part 1, the record and the dashboard, in a real redis-server: for each size in `--records`, the
record's size in Redis, the dashboard's characters (always under GitHub's 65,536) and the time
to render it, and one repository event (its entry changed, the halt, completion and wave rules
applied, the record saved): its time, as a ratio against the smallest size, and the bytes it
wrote. Flat from 50 to 1,000: the rules read counters, the save writes one field.

Part 2, through the App with real RQ workers (bench/campaign_app.py), for each size in
`--repos` and each count in `--workers`.

Part 3, hundreds of repositories (bench/campaign_scale.py), for the sizes in `--scale`: the
preview's time and GitHub requests a repository (public, then private: the permission look-ups a
preview makes), and the rollout's dashboard edits an event.
"""

from __future__ import annotations

import argparse
import logging
import time
from datetime import UTC, datetime

import redis

from bench._common import machine_facts
from bench.campaign_app import Run, app_run
from bench.campaign_scale import scale_part
from bot.plumbing import campaign_store
from jobs.features.campaigns.dashboard import BODY_LIMIT, render_dashboard
from jobs.features.campaigns.port import JobView, record_view
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.rollout import next_wave, settle
from jobs.features.campaigns.settings import CampaignSettings
from tests.kit.redis_server import running_redis

NOW = datetime.now(UTC)
OWNER = "bench-org"


def record_part(sizes: list[int], url: str) -> None:
    """The record at each size: its bytes in Redis, the dashboard, and one repository event
    (its entry changed, the rules applied, the record saved) in time and bytes written."""
    print("Part 1: the record and the dashboard (a real redis-server)")
    print(f"{'repos':>6} {'record KB':>10} {'dashboard chars':>16} {'render ms':>10} "
          f"{'event µs':>9} {'event ratio':>12} {'bytes/event':>12} {'load ms':>8}")
    connection, base = redis.Redis.from_url(url), None
    settings = CampaignSettings(max_open_prs=10_000)
    for size in sizes:
        campaign = Campaign(id="bench", title="Move to new()", spec_digest="d", created_at=NOW,
                            updated_at=NOW, status=CampaignStatus.RUNNING)
        states = [RepoState.COMPLETED, RepoState.WAITING, RepoState.WORKING, RepoState.APPROVED]
        for index in range(size):
            name = f"{OWNER}/service-with-a-long-name-{index:04d}"
            campaign.repos[name] = RepoEntry(name=name, state=states[index % 4], files=12,
                                             targets=30, wave=index // 10, batches_total=3,
                                             gate="milestone", answers=["/stepwise approve"],
                                             where=f"{name}#1")
        doc = campaign_store.CampaignDoc(
            campaign=campaign, settings=settings, control=f"{OWNER}/control", number=size,
            installation_id=1, title="Move to new()", task_body="body", issue_text="text")
        campaign_store.save(connection, doc)
        record_kb = connection.memory_usage(doc.key) or 0
        started = time.perf_counter()
        body = render_dashboard(campaign)
        render_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        loaded = campaign_store.load(connection, doc.key)
        load_ms = (time.perf_counter() - started) * 1000
        assert loaded is not None
        entries, rounds, written, best = loaded.campaign.entries(RepoState.WAITING), 50, 0, []
        for repeat in range(10):  # the fastest of 10 rounds: the machine is shared
            started = time.perf_counter()
            for index in range(rounds):  # one repository event: an entry, the rules, a save
                record_view(entries[(repeat * rounds + index) % len(entries)], JobView(
                    state=RepoState.WAITING, batches_done=1 + index % 2, batches_total=3))
                settle(loaded.campaign, settings, NOW)
                next_wave(loaded.campaign, settings)
                written += campaign_store.save(connection, loaded)
            best.append(time.perf_counter() - started)
        event_us = min(best) / rounds * 1e6
        base = base or event_us
        assert len(body) <= BODY_LIMIT
        print(f"{size:>6} {record_kb / 1024:>10.1f} {len(body):>16} {render_ms:>10.1f} "
              f"{event_us:>9.0f} {event_us / base:>12.2f} {written / (10 * rounds):>12.0f} "
              f"{load_ms:>8.1f}")
        connection.delete(doc.key)
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.campaign", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", default="20", help="sizes through the App, e.g. 50,500")
    parser.add_argument("--broken", type=int, default=2)
    parser.add_argument("--halt", type=float, default=0.4)
    parser.add_argument("--workers", default="2", help="worker counts, e.g. 2,4")
    parser.add_argument("--light", type=int, default=0,
                        help="from this many repositories up, healthy ones get no validation")
    parser.add_argument("--reconcile", type=int, default=2, help="seconds between ticks")
    parser.add_argument("--wave", type=int, default=10)
    parser.add_argument("--records", default="50,500,1000")
    parser.add_argument("--scale", default="30,300", help="preview sizes, e.g. 30,300 ('': none)")
    options = parser.parse_args()
    logging.getLogger("rq").setLevel(logging.WARNING)
    print(f"bench.campaign on {machine_facts()}")
    with running_redis() as url:
        record_part([int(size) for size in options.records.split(",")], url)
    if options.scale:
        scale_part([int(size) for size in options.scale.split(",")])
    for size in (int(n) for n in options.repos.split(",") if n):
        for count in (int(n) for n in options.workers.split(",") if n):
            app_run(Run(repos=size, broken=options.broken, workers=count, halt=options.halt,
                        light=bool(options.light) and size >= options.light, wave=options.wave,
                        reconcile_s=options.reconcile))


if __name__ == "__main__":
    main()
