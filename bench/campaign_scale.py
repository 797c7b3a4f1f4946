"""Benchmark part 3 of bench/campaign.py: a campaign over hundreds of repositories (issue 46).

The preview through the App's own code (`start_campaign`, a real redis-server, the loopback fake
GitHub, a mirror per repository) at a small and a large size: its wall time and the time per
repository as a ratio against the small size (flat: the preview is linear), the GitHub requests
a repository (reads, and content-creating writes), and the dashboard's characters (always under
GitHub's 65,536); each size twice, all repositories public, then all private with a private
control repository, counting the permission look-ups and collaborator listings the preview makes
(issue 40: once each per private repository and preview). Then the rollout at the large size,
driven through the campaign's own rules (`drive`) with a simulated port whose jobs move one
state each pass (started, waiting at a gate, completed): repository events, dashboard edits
(one per pass at most, never one per event), the most repositories open at once against
`max_open_prs`, and the content-creating requests the starts need against GitHub's 80 a minute
and 500 an hour.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis

from bench.campaign_app import ISSUE, OWNER
from bot.events import Event, Kind
from bot.plumbing import campaign_store
from bot.server.campaigns.tasks import start_campaign
from bot.server.context import ServerContext
from bot.settings import Settings
from jobs.adapters.sandbox import make_sandbox
from jobs.features.campaigns.dashboard import BODY_LIMIT, render_dashboard
from jobs.features.campaigns.port import JobView, Preview, drive
from jobs.features.campaigns.record import OPEN_STATES, Campaign, RepoEntry, RepoState
from jobs.features.campaigns.selection import RepoFacts
from jobs.features.campaigns.settings import CampaignSettings
from jobs.features.campaigns.steering import JobAction, apply, parse_command
from jobs.inputs.config import RepoConfig
from tests.kit.campaign_repos import service_files
from tests.kit.github import FakeGitHub
from tests.kit.redis_server import running_redis

LIGHT = 'validate: ["python -c pass"]\nallow_commands: [python]\nci:\n  wait: off\n'
WRITES_PER_START = 1  # the tracking issue; the job's own writes are its steps', paced alike
PERMISSION = re.compile(r"/collaborators/[^/]+/permission$")
LISTING = re.compile(r"/collaborators$")


@dataclass(frozen=True)
class PreviewRun:
    wall_s: float
    reads: float  # GitHub reads a repository
    writes: float  # content-creating writes a repository
    chars: int  # the dashboard's characters
    permissions: int  # the starter's permission look-ups in the whole preview
    listings: int  # collaborator listings in the whole preview


def preview_run(repos: int, url: str, *, private: bool = False) -> PreviewRun:
    """The preview of `repos` repositories (all private, and the control repository too, with
    `private`: each is then shown only after the starter's permission and its readers are
    looked up, bot/server/campaigns/access.py, once per preview)."""
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(root=Path(tmp) / "github") as gh:
        connection = redis.Redis.from_url(url)
        connection.flushdb()
        control = gh.add_repo(OWNER, "control", {"README.md": "# control\n"}, private=private)
        gh.set_permission(control.full_name, "maria", "maintain")
        for index in range(repos):
            repo = gh.add_repo(OWNER, f"svc-{index:03d}", service_files(), config=LIGHT,
                               private=private)
            gh.set_permission(repo.full_name, "maria", "maintain")
        number = gh.add_issue(control, "Move every service to new()", ISSUE.format(
            halt=0.4, wave=25, repos=50), user="maria")
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret="bench-" + uuid.uuid4().hex, redis_url=url,
                            github_api_url=gh.base_url, workdir=Path(tmp) / "work",
                            app_slug="stepwise")
        ctx = ServerContext.from_settings(settings, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        inst = next(i for i, x in gh.installations.items() if control.full_name in x.repos)
        before = len(gh.requests)
        started = time.perf_counter()
        start_campaign(ctx, Event(kind=Kind.LABELED, delivery_id=uuid.uuid4().hex,
                                  repo=control.full_name, installation_id=inst, number=number,
                                  sender="maria", label="stepwise-campaign"), RepoConfig())
        wall = time.perf_counter() - started
        made = gh.requests[before:]
        writes = sum(1 for r in made if r.method in ("POST", "PATCH", "PUT", "DELETE"))
        doc = campaign_store.find(connection, control.full_name, number)
        assert doc is not None and doc.campaign.count(RepoState.PREVIEWED) == repos
        body = gh.repos[control.full_name].issues[number].body or ""
        connection.close()
        permissions = sum(1 for r in made if r.method == "GET" and
                          PERMISSION.search(r.path.split("?")[0]))
        listings = sum(1 for r in made if r.method == "GET" and
                       LISTING.search(r.path.split("?")[0]))
        return PreviewRun(wall, (len(made) - writes) / repos, writes / repos, len(body),
                          permissions, listings)


class SimulatedPort:
    """Each started repository's job moves one state a pass: working, waiting at its plan gate
    (approved by the campaign on the next read), working, completed."""

    def __init__(self) -> None:
        self.step: dict[str, int] = {}
        self.starts = 0

    def resolve(self, target: str) -> str | None:
        return target

    def facts(self, name: str) -> RepoFacts:
        return RepoFacts(name=name)

    def preview(self, name: str) -> Preview:
        return Preview(files=3, targets=5, digest="d")

    def start(self, entry: RepoEntry) -> JobView:
        self.starts += 1
        self.step[entry.name] = 0
        return JobView(state=RepoState.WORKING, job=f"{entry.name}#1")

    def read(self, entry: RepoEntry, *, passes_gates: bool) -> JobView:
        step = self.step[entry.name] = self.step[entry.name] + 1
        if step >= 3:
            return JobView(state=RepoState.COMPLETED, batches_done=1, batches_total=1,
                           files_done=3, link=f"https://github.com/{entry.name}/pull/2",
                           pull=f"https://github.com/{entry.name}/pull/2")
        return JobView(state=RepoState.WAITING if step == 1 else RepoState.WORKING,
                       gate="plan" if step == 1 else "", batches_total=1)

    def act(self, entry: RepoEntry, action: JobAction) -> JobView:
        return JobView(state=entry.state)


def rollout_run(repos: int) -> None:
    settings = CampaignSettings(canary=2, wave=25, max_open_prs=50)
    now = datetime(2026, 12, 1, tzinfo=UTC)
    campaign = Campaign(id="scale", title="Move to new()", spec_digest="d", created_at=now,
                        updated_at=now)
    port = SimulatedPort()
    for index in range(repos):
        name = f"{OWNER}/svc-{index:03d}"
        campaign.repos[name] = RepoEntry(name=name, state=RepoState.PREVIEWED, files=3,
                                         targets=5, preview_digest="d")
    apply(campaign, parse_command("approve all"), now)
    events = edits = passes = most_open = longest = 0
    last, starts_by_minute = "", []
    while campaign.count(RepoState.COMPLETED) < repos and passes < 10_000:
        passes += 1
        now += timedelta(seconds=20)  # the reconciler's pass
        before = {e.name: e.state for e in campaign.entries()}
        starts = port.starts
        drive(campaign, settings, port, now)
        starts_by_minute.append(port.starts - starts)
        events += sum(1 for e in campaign.entries() if before[e.name] is not e.state)
        most_open = max(most_open, campaign.count(*OPEN_STATES))
        body = render_dashboard(campaign)
        longest = max(longest, len(body))
        digest = hashlib.sha256(body.encode()).hexdigest()
        if digest != last:
            edits, last = edits + 1, digest
    per_minute = max(sum(starts_by_minute[i:i + 3]) for i in range(len(starts_by_minute)))
    print(f"rollout of {repos} (canary 2, wave 25, max_open_prs 50), simulated jobs, a pass every "
          f"20 s: {passes} passes, {events} repository events, {edits} dashboard edits "
          f"({edits / max(events, 1):.3f} an event), at most {most_open} open at once, "
          f"longest dashboard {longest} characters (limit {BODY_LIMIT}), at most "
          f"{per_minute * WRITES_PER_START} tracking issues opened in a minute "
          f"(GitHub: 80; the App's write budget paces every write beyond)")


def scale_part(sizes: list[int]) -> None:
    print("\nPart 3: hundreds of repositories (the preview through the App; the rollout's rules)")
    print("public: every repository public (no permission look-up); private: every repository and "
          "the control repository private (the starter's permission and the readers looked up, "
          "once each per preview); ratio: s/repo against the first public row")
    print(f"{'repos':>6} {'kind':>8} {'preview s':>10} {'s/repo':>8} {'ratio':>6} "
          f"{'reads/repo':>11} {'writes/repo':>12} {'permission':>11} {'listings':>9} "
          f"{'dashboard chars':>16}")
    base = None
    with running_redis() as url:
        for size in sizes:
            for private in (False, True):
                run = preview_run(size, url, private=private)
                per = run.wall_s / size
                base = base or per
                print(f"{size:>6} {'private' if private else 'public':>8} {run.wall_s:>10.1f} "
                      f"{per:>8.3f} {per / base:>6.2f} {run.reads:>11.1f} {run.writes:>12.3f} "
                      f"{run.permissions:>11} {run.listings:>9} {run.chars:>16}")
    rollout_run(max(sizes))
