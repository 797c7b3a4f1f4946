"""Rebuilding a job whose Redis record was lost, from GitHub: the issue's spec, the branch's
trailers (same job id, so committed batches are adopted, never redone) and the open PR."""

from __future__ import annotations

import re

from bot.server.context import ServerContext
from jobs.domain.config import CONFIG_PATH, load_config
from jobs.domain.errors import StepwiseError
from jobs.domain.job import Job
from jobs.domain.records import PullRequest
from jobs.domain.spec import parse_issue
from jobs.engine.engine import Base, create_job

BRANCH = re.compile(r"^stepwise/issue-(\d+)(?:-\d+)?$")


def rebuild(ctx: ServerContext, *, repo: str, number: int, installation_id: int) -> Job | None:
    """The lost job of issue (or PR) `number`, if its branch still carries job commits."""
    client = ctx.installation(installation_id)
    owner, name = repo.split("/", 1)
    issue = client.issue(owner, name, number)
    if issue.is_pull_request:
        match = BRANCH.match(client.pull_head(owner, name, number))
        if match is None:
            return None
        number = int(match.group(1))
        issue = client.issue(owner, name, number)
    info = client.repo(owner, name)
    try:
        task = parse_issue(issue.title, issue.body)
        config = load_config(client.file(owner, name, CONFIG_PATH, info.default_branch))
    except StepwiseError:
        return None
    mirror = ctx.mirror(client, repo, info.clone_url, info.default_branch)
    mirror.remote("fetch", "--quiet", "--no-tags", "origin",
                  f"+refs/heads/stepwise/issue-{number}:refs/heads/stepwise/issue-{number}",
                  f"+refs/heads/stepwise/issue-{number}-*:refs/heads/stepwise/issue-{number}-*")
    base_sha = mirror.branch_head(info.default_branch)
    if base_sha is None:
        return None
    forge = ctx.forge(client, repo, squash_only=info.squash_only)
    services = ctx.engine_services(mirror, forge, repo=repo)
    job = create_job(task, number, services, repo_name=repo,
                     base=Base(branch=info.default_branch, sha=base_sha, config=config))
    tip = mirror.branch_head(job.branch)
    commits = mirror.commits(job.base_sha, tip) if tip else []
    ours = [c for c in commits if c.trailers.get("Stepwise-Job") == job.id]
    if not ours:
        return None  # nothing of a lost job on GitHub: not a rebuild
    # Work went past the plan and every milestone before the last one that has commits.
    reached = max(int(c.trailers.get("Stepwise-Milestone", "1")) for c in ours)
    job.approved_digest = job.spec_digest
    job.approved_milestones = list(range(1, reached))
    pull = client.find_pull(owner, name, job.branch)
    if pull is not None:
        job.server.pull = PullRequest(number=pull.number, node_id=pull.node_id,
                                      url=pull.html_url, draft=pull.draft)
    job.server.installation_id, job.server.rebuilt = installation_id, True
    ctx.store.save(job)
    return job
