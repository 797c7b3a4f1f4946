"""After Redis lost its data (bot/server/heartbeat.py noticed the missing marker): find every job
GitHub still shows and rebuild it, so commands, the reaper and the task center work again
without waiting for someone to comment.

Where a job shows on GitHub: an open pull request from a job branch (`stepwise/issue-N`), and an
open issue carrying the repository's trigger label. Each one without a record is rebuilt from
its branch's trailers, its pull request and its comments (bot/server/rebuild.py `rebuild`) and
its next step queued: it re-plans, adopts its commits and goes on, or stops again at its gate
with a fresh comment. A labelled issue whose job never pushed anything (it was planning, or at
its plan gate) cannot be rebuilt: the issue is told what to do (LOST_BEFORE_PUSH), once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from bot.github.client import MAX_PAGES, PER_PAGE, Installation, response_json
from bot.github.installed_repos import installation_repositories
from bot.plumbing.keys import rebuild_lock
from bot.plumbing.leases import job_lock
from bot.plumbing.trigger_labels import DEFAULT_TRIGGER_LABEL, remember_trigger_label
from bot.server.context import ServerContext
from bot.server.rebuild import BRANCH, rebuild
from bot.server.steps import queue_next_step
from jobs.basics.errors import StepwiseError
from jobs.inputs.config import CONFIG_PATH, load_config
from jobs.kernel.model import JobStatus

log = logging.getLogger(__name__)
CARD_STATUS = re.compile(r"^Status: `([a-z_]+)`", re.MULTILINE)  # jobs/notes/progress.py
ENDED = frozenset(s.value for s in (JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED))
PLAN_MARKER = re.compile(r"<!-- stepwise:[^:]+:plan -->")
LOST_MARKER = "<!-- stepwise:lost-record -->"
LOST_BEFORE_PUSH = (
    "Stepwise's Redis lost its data, and with it this issue's job, before the job had pushed "
    "anything to GitHub (it was planning, or waiting for its plan to be approved), so it "
    "cannot be rebuilt. Remove the `{label}` label and add it again to start the job over: "
    "the plan is posted again for approval.\n\n" + LOST_MARKER)


def installation_ids(ctx: ServerContext) -> list[int]:
    """The App's installations (GET /app/installations, as the App)."""
    app = ctx.github
    found: list[int] = []
    for page in range(1, MAX_PAGES + 1):
        batch = response_json(app.rest(app._app).apps.list_installations(
            per_page=PER_PAGE, page=page))
        found += [int(item["id"]) for item in batch if not item.get("suspended_at")]
        if len(batch) < PER_PAGE:
            break
    return found


def listed(client: Installation, call: Callable[[Any, int], Any]) -> list[dict[str, Any]]:
    """Every page of a listing `call(gh, page)`."""
    found: list[dict[str, Any]] = []
    for page in range(1, MAX_PAGES + 1):
        def fetch(gh: Any, page: int = page) -> Any:
            return response_json(call(gh, page))

        batch: list[dict[str, Any]] = client._call(fetch)
        found += batch
        if len(batch) < PER_PAGE:
            break
    return found


def jobs_on_github(client: Installation, repo: str, default_branch: str,
                   ) -> tuple[str, set[int], set[int]]:
    """The repository's trigger label, the issues carrying it and the issues whose job branch
    has an open pull request."""
    owner, name = repo.split("/", 1)
    try:
        label = load_config(client.file(owner, name, CONFIG_PATH, default_branch)).trigger_label
    except StepwiseError:
        label = DEFAULT_TRIGGER_LABEL
    issues = listed(client, lambda gh, page: gh.issues.list_for_repo(
        owner, name, state="open", labels=label, per_page=PER_PAGE, page=page))
    pulls = listed(client, lambda gh, page: gh.pulls.list(
        owner, name, state="open", per_page=PER_PAGE, page=page))
    labelled = {int(i["number"]) for i in issues if "pull_request" not in i}
    branches = {int(m.group(1)) for p in pulls
                if (m := BRANCH.match(str(p.get("head", {}).get("ref", ""))))
                and not ended(str(p.get("body") or ""))}
    return label, labelled, branches


def ended(card: str) -> bool:
    """Whether a job's pull request body (its progress card) says the job ended: an ended job
    is not brought back to life (its record may have been pruned on purpose, too)."""
    status = CARD_STATUS.search(card)
    return status is not None and status.group(1) in ENDED


def recover_jobs(ctx: ServerContext) -> dict[str, int]:
    """Rebuild every job GitHub shows that Redis does not know; returns what it did."""
    done = {"rebuilt": 0, "told": 0, "known": 0}
    for installation_id in installation_ids(ctx):
        client = ctx.installation(installation_id)
        for found in installation_repositories(client):
            if found.archived:
                continue
            label, labelled, branches = jobs_on_github(client, found.full_name,
                                                       found.default_branch)
            remember_trigger_label(ctx.redis, found.full_name, label)
            for number in sorted(labelled | branches):
                outcome = recover_one(ctx, client, found.full_name, number, installation_id,
                                      label=label, labelled=number in labelled)
                done[outcome] += 1
    log.warning("jobs rebuilt from GitHub after Redis lost its data", extra=done)
    return done


def recover_one(ctx: ServerContext, client: Installation, repo: str, number: int,
                installation_id: int, *, label: str, labelled: bool) -> str:
    if ctx.store.find(repo, number) is not None:
        return "known"
    with job_lock(ctx.redis, rebuild_lock(repo, number)) as acquired:
        job = rebuild(ctx, repo=repo, number=number, installation_id=installation_id) \
            if acquired else None
    if job is not None:
        queue_next_step(ctx, job)
        log.info("job rebuilt from GitHub", extra={"job_id": job.id, "repo": repo,
                                                   "issue": number})
        return "rebuilt"
    owner, name = repo.split("/", 1)
    app_login = f"{ctx.settings.app_slug}[bot]".casefold()
    planned = any(c.is_bot and c.author.casefold() == app_login and PLAN_MARKER.search(c.body)
                  for c in client.comments(owner, name, number)) if labelled else False
    if not planned:
        return "known"  # nothing of a job here (or not Stepwise's to rebuild)
    client.create_comment(owner, name, number, LOST_BEFORE_PUSH.format(label=label),
                          marker=LOST_MARKER)
    return "told"
