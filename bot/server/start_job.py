"""Starting a job on an issue: from the trigger label, or again from `/stepwise retry-start` after
a start that failed (the issue's text and the default branch's config read as they are now). An
issue whose job was cancelled or failed resumes that job, on its branch and pull request, rather
than starting over; an issue whose job is at its plan gate plans again with the current config."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.authz import STEERING_ROLES
from bot.github.client import Installation
from bot.github.errors import ForgeError
from bot.github.forge import GitHubForge
from bot.github.git_data import SIGNATURES_FIX, SIGNATURES_REQUIRED, requires_signed_commits
from bot.plumbing.keys import start_lease
from bot.plumbing.leases import Lease
from bot.plumbing.pruned import pruned_for_issue
from bot.server.context import ServerContext
from bot.server.resume import resume_ended
from bot.server.steps import queue_next_step
from bot.steering import resolve_approvers, steering_decision
from jobs.basics.errors import BadInputError, RetryClass, StepwiseError
from jobs.composition import drafting
from jobs.decisions.resume import resumable
from jobs.engine.engine import Base, create_job
from jobs.inputs.config import CONFIG_PATH, RepoConfig, load_config
from jobs.inputs.spec import parse_issue
from jobs.inputs.spec_block import has_spec_block
from jobs.kernel.gates import RefusedError
from jobs.kernel.gates import reload_config as reload_job_config
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus

log = logging.getLogger(__name__)

CANNOT_START = ("Stepwise cannot start: {}\n\nFix: {}\n\nTo try again once it is fixed (the issue's "
                "text, or `.github/stepwise.yml` on the default branch): comment "
                "`/stepwise retry-start`, or remove the `{label}` label and add it again.")
COMPLETED = ("The Stepwise job of this issue completed; `/stepwise retry-start` starts again only "
             "a job whose start failed. To run the task again, remove the `{label}` label and "
             "add it again.")


@dataclass(frozen=True)
class StartRequest:
    """Who asks to start a job on which issue, and where the answer goes."""

    repo: str
    number: int
    installation_id: int
    sender: str
    key: str  # the marker key of the answer (a retried delivery edits it)
    label: str  # the trigger label as written (or the config's, for a command)
    retry: bool = False  # `/stepwise retry-start`: a completed job is not started again
    sender_id: int = 0  # the sender's account id (webhooks carry it)


def start_job(ctx: ServerContext, request: StartRequest, config: RepoConfig) -> None:
    """Start (or resume) the job of `request.number` with `config`, answering on the issue when
    nothing starts. Raises StepwiseError (auto_retry) while another worker starts it."""
    client = ctx.installation(request.installation_id)
    owner, name = request.repo.split("/", 1)
    info = client.repo(owner, name)
    forge = ctx.forge(client, request.repo, squash_only=info.squash_only)
    with Lease(ctx.redis, start_lease(request.repo, request.number),
               ttl_s=ctx.settings.lease_ttl_s) as lease:
        if not lease.held:  # another worker is starting it, or died doing so: try again later
            raise StepwiseError("another worker is starting a job for this issue",
                                code="start_busy", retry_class=RetryClass.AUTO_RETRY,
                                hint="the delivery is retried in a few seconds")
        # `approvers` name accounts: resolved to their ids now, matched by id from now on
        approver_ids = resolve_approvers(client, config.approvers)
        decision = steering_decision(client, request.repo, login=request.sender,
                                     approvers=config.approvers, action="starting a job",
                                     actor_id=request.sender_id, approver_ids=approver_ids)
        if not decision.allowed:
            forge.reply(None, request.number, request.key,
                        f"Stepwise did not start. {decision.reason}.")
            return
        acknowledge(client, request)  # 👀 within seconds, before the clone
        existing = ctx.store.find(request.repo, request.number)
        if existing is not None and again(ctx, forge, request, existing, config, approver_ids):
            return
        if config.commit_via == "git" and requires_signed_commits(client, request.repo,
                                                                  info.default_branch):
            forge.reply(None, request.number, request.key, CANNOT_START.format(
                SIGNATURES_REQUIRED.format(branch=info.default_branch), SIGNATURES_FIX,
                label=request.label))
            return
        issue = client.issue(owner, name, request.number)
        repository = ctx.mirror(client, request.repo, info.clone_url, info.default_branch)
        base_sha = repository.branch_head(info.default_branch)
        if base_sha is None:
            return
        services = ctx.engine_services(repository, forge, repo=request.repo)
        # A job retention removed ended: its branch is not a lost record to recover.
        pruned = pruned_for_issue(ctx.redis, request.repo, request.number) is not None
        base = Base(branch=info.default_branch, sha=base_sha, config=config)
        drafter = drafting(services.features)
        try:
            if drafter is not None and drafter.server(config) and not has_spec_block(issue.body):
                job, comment = drafter.draft(services, issue.title, issue.body, request.number,
                                             base=base, repo_name=request.repo)
                forge.reply(None, request.number, request.key, comment)
            else:
                job = create_job(parse_issue(issue.title, issue.body), request.number, services,
                                 repo_name=request.repo, base=base,
                                 recover=existing is None and not pruned)
        except BadInputError as exc:
            forge.reply(None, request.number, request.key,
                        CANNOT_START.format(exc.message, exc.hint, label=request.label))
            return
        author_role = client.permission(owner, name, issue.author)
        job.server.installation_id = request.installation_id
        job.server.started_by = request.sender  # assigned, mentioned at gates, asked to review
        job.server.approver_ids = approver_ids
        # a drafted spec always is untrusted
        job.untrusted_spec = job.untrusted_spec or author_role not in STEERING_ROLES
        ctx.store.save(job)
    queue_next_step(ctx, job)


def again(ctx: ServerContext, forge: GitHubForge, request: StartRequest,
          job: Job, config: RepoConfig, approver_ids: dict[str, int]) -> bool:
    """The issue already has a job: resume it when it was cancelled or failed, plan again with
    `config` when it waits at its plan gate (retry-start), else say why nothing starts; True
    when the answer is given (False: start a new job, after a completed one)."""
    if job.status is JobStatus.COMPLETED:
        if not request.retry:
            return False
        forge.reply(job, request.number, request.key, COMPLETED.format(label=request.label))
    elif resumable(job):
        try:
            message = resume_ended(ctx, job, installation_id=request.installation_id)
        except BadInputError as exc:
            forge.reply(job, request.number, request.key,
                        CANNOT_START.format(exc.message, exc.hint, label=request.label))
        else:
            forge.reply(job, request.number, request.key, f"Stepwise: {message}.")
    elif request.retry and job.gate is not None and (job.gate.kind is Gate.PLAN
                                                       or job.gate.while_planning):
        try:
            message = reload_job_config(job, config)
            job.server.approver_ids = approver_ids  # the reloaded list's accounts
        except RefusedError as exc:  # the gate was checked just above; say it all the same
            message = exc.message
        forge.reply(job, request.number, request.key, f"Stepwise: {message}.")
        ctx.store.save(job)
        queue_next_step(ctx, job)
    else:
        pull = job.server.pull
        where = f" in #{pull.number}" if pull is not None else ""
        forge.reply(job, request.number, request.key,
                    f"A Stepwise job for this issue is already `{job.status}`{where}; nothing "
                    f"new was started (see `/stepwise status`).")
    ctx.store.save(job)  # the answer's comment id
    return True


def default_config(client: Installation, repo: str) -> RepoConfig:
    """`.github/stepwise.yml` as it is now on the repository's default branch (BadInputError
    when it is invalid)."""
    owner, name = repo.split("/", 1)
    info = client.repo(owner, name)
    return load_config(client.file(owner, name, CONFIG_PATH, info.default_branch))


def acknowledge(client: Installation, request: StartRequest) -> None:
    """React 👀 to the issue: the request was seen and a job is being set up (best effort: a
    fault here never stops the start)."""
    owner, name = request.repo.split("/", 1)
    try:
        client.react_to_issue(owner, name, request.number, "eyes")
    except ForgeError as exc:
        if exc.retry_class is RetryClass.DO_NOT_RETRY:
            raise
        log.warning("could not react to the issue", extra={"repo": request.repo,
                                                           "issue": request.number})
