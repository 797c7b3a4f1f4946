"""The job an event is about: found by its issue or by the pull request it opened, or rebuilt
when its Redis record was lost, from GitHub: the issue's spec, the branch's trailers (same job
id, so committed batches and the change note are adopted, never redone), the open PR, and the
job's comments by their hidden markers (old gate ids are never reused)."""

from __future__ import annotations

import re

from bot.events import Event
from bot.github.client import Installation
from bot.plumbing.keys import pull_key, rebuild_lock
from bot.plumbing.leases import job_lock
from bot.plumbing.pruned import pruned_for_issue
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step
from jobs.basics.errors import StepwiseError
from jobs.engine.engine import Base, create_job
from jobs.inputs.config import CONFIG_PATH, load_config
from jobs.inputs.spec import parse_issue
from jobs.kernel import trailers
from jobs.kernel.job import Job
from jobs.kernel.outbox import GATE_PREFIX
from jobs.kernel.records import PullRequest

NO_JOB = ("There is no Stepwise job on this issue or pull request. If one ran here and its "
          "record was lost before it pushed anything, remove the trigger label and add it again "
          "to start it over.")
BRANCH = re.compile(r"^stepwise/issue-(\d+)(?:-\d+)?$")
GATE_ID = re.compile(rf"^{re.escape(GATE_PREFIX)}[a-z_]+-(\d+)$")  # gate:<kind>-<n>


def job_for(ctx: ServerContext, event: Event) -> Job | None:
    """The job of an issue, or of the pull request it opened; rebuilt from GitHub if its
    record was lost."""
    job = ctx.store.find(event.repo, event.number)
    if job is None:
        job_id = ctx.redis.get(pull_key(event.repo, event.number))
        if isinstance(job_id, bytes):
            job = ctx.store.load_id(job_id.decode())
    if job is None:
        with job_lock(ctx.redis, rebuild_lock(event.repo, event.number)) as acquired:
            if acquired:
                job = rebuild(ctx, repo=event.repo, number=event.number,
                              installation_id=event.installation_id)
        if job is not None:
            queue_next_step(ctx, job)  # it re-plans, adopts its commits and stops at its gate
    return job


def rebuild(ctx: ServerContext, *, repo: str, number: int, installation_id: int) -> Job | None:
    """The lost job of issue (or PR) `number`, if its branch still carries job commits; never
    one that retention removed (it ended: bot/server/retention.py)."""
    if pruned_for_issue(ctx.redis, repo, number) is not None:
        return None
    client = ctx.installation(installation_id)
    owner, name = repo.split("/", 1)
    issue = client.issue(owner, name, number)
    if issue.is_pull_request:
        match = BRANCH.match(client.pull_head(owner, name, number))
        if match is None:
            return None
        number = int(match.group(1))
        if pruned_for_issue(ctx.redis, repo, number) is not None:
            return None
        issue = client.issue(owner, name, number)
    info = client.repo(owner, name)
    try:
        task = parse_issue(issue.title, issue.body)
        config = load_config(client.file(owner, name, CONFIG_PATH, info.default_branch))
    except StepwiseError:
        return None
    mirror = ctx.mirror(client, repo, info.clone_url, info.default_branch)
    branches = job_branches(mirror.remote("ls-remote", "--heads", "origin",
                                          f"stepwise/issue-{number}*"), number)
    if not branches:
        return None  # no job ever pushed here: nothing to rebuild (the caller answers)
    mirror.remote("fetch", "--quiet", "--no-tags", "origin",
                  *(f"+{ref}:{ref}" for ref in branches))
    base_sha = mirror.branch_head(info.default_branch)
    if base_sha is None:
        return None
    forge = ctx.forge(client, repo, squash_only=info.squash_only)
    services = ctx.engine_services(mirror, forge, repo=repo)
    job = create_job(task, number, services, repo_name=repo,
                     base=Base(branch=info.default_branch, sha=base_sha, config=config))
    tip = mirror.branch_head(job.branch)
    commits = mirror.commits(job.base_sha, tip) if tip else []
    ours = [c for c in commits if c.trailers.get(trailers.JOB) == job.id]
    if not ours:
        return None  # nothing of a lost job on GitHub: not a rebuild
    # Work went past the plan and every milestone before the last one that has commits.
    reached = max(int(c.trailers.get(trailers.MILESTONE, "1")) for c in ours)
    job.approved_digest = job.spec_digest
    job.approved_milestones = list(range(1, reached))
    pull = client.find_pull(owner, name, job.branch)
    if pull is not None:
        job.server.pull = PullRequest(number=pull.number, node_id=pull.node_id,
                                      url=pull.html_url, draft=pull.draft)
    job.server.installation_id, job.server.rebuilt = installation_id, True
    adopt_comments(job, client, owner, name, [job.number, *([pull.number] if pull else [])],
                   app_login=f"{ctx.settings.app_slug}[bot]")
    ctx.store.save(job)
    return job


def job_branches(listing: str, number: int) -> list[str]:
    """The refs of issue `number`'s job branches (`stepwise/issue-N`, `stepwise/issue-N-2`, ...)
    in `git ls-remote --heads` output."""
    refs = [line.split()[1] for line in listing.splitlines() if len(line.split()) == 2]
    return [ref for ref in refs if (match := BRANCH.match(ref.removeprefix("refs/heads/")))
            and int(match.group(1)) == number]


def adopt_comments(job: Job, client: Installation, owner: str, name: str,
                   numbers: list[int], *, app_login: str) -> None:
    """Know the job's comments again by their hidden markers (`<!-- stepwise:<job>:<key> -->`):
    the plan, the card and each gate's. Gate ids go on after the highest one found, so the
    current gate gets a comment of its own instead of being written into an old one."""
    pattern = re.compile(rf"<!-- stepwise:{re.escape(job.id)}:([^ ]+) -->")
    highest = 0
    for number in numbers:
        for comment in client.comments(owner, name, number):
            if not comment.is_bot or comment.author.casefold() != app_login.casefold():
                continue  # a person (or another bot) quoting a marker adopts nothing
            for key in pattern.findall(comment.body):
                job.server.comments.setdefault(key, comment.id)
                gate = GATE_ID.match(key)
                if gate is not None:
                    highest = max(highest, int(gate.group(1)))
    job.gate_counter = max(job.gate_counter, highest)
