"""Worker tasks for events: start a job from a label, react to closes, edits and pushes, and route
each event to its task (comment commands live in bot/server/comments.py). The plugs
(bot/server/plugs.py: campaigns) are asked first whether a label or an issue is theirs."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from bot.authz import STEERING_ROLES
from bot.events import Event, Kind
from bot.plumbing.keys import event_lease
from bot.plumbing.leases import Lease
from bot.plumbing.queue import last_try
from bot.plumbing.trigger_labels import is_trigger, remember_trigger_label
from bot.server import plugs, reconciler, steps
from bot.server.check_rerun import on_check_rerun
from bot.server.ci_events import on_ci_event
from bot.server.comments import on_comment
from bot.server.config_check import check_config_push
from bot.server.confirmations import closed_on_github
from bot.server.context import ServerContext
from bot.server.installations import end_removed_jobs
from bot.server.rebuild import job_for
from bot.server.resume import offer_resume
from bot.server.start_job import CANNOT_START, StartRequest, default_config, start_job
from bot.server.steer import Actor, ServerWiring, steer
from bot.server.steps import ACTIVE, queue_next_step
from bot.server.worker import Handler
from jobs.adapters.store import ConflictError
from jobs.basics.errors import BadInputError, StepwiseError
from jobs.composition import base_pushed
from jobs.engine import usecases
from jobs.inputs.spec import parse_issue
from jobs.kernel.gates import Verb, note_spec_change
from jobs.kernel.job import Job
from jobs.ports import Publication

log = logging.getLogger(__name__)


CLOSED_BY_OTHER = (
    "@{sender} closed this {what}, but the Stepwise job goes on. {reason}.\n\n"
    "Someone who may steer it (write, maintain or admin permission, or the config's "
    "`approvers`) can stop it with `/stepwise cancel`; reopening changes nothing for the job."
)


# -- start ---------------------------------------------------------------------------------------
def start_key(event: Event) -> str:
    """The marker key of an answer to one label delivery: a retried delivery edits it."""
    return f"start:{event.delivery_id}"


LABEL_FAILED = ("Stepwise could not start a job for this label: `{code}`: {message}\n\n"
                "What to do: {hint}. Then remove the `{label}` label and add it again (or "
                "redeliver the webhook from the App's advanced settings).")


def on_labeled(ctx: ServerContext, event: Event) -> None:
    client = ctx.installation(event.installation_id)
    try:
        config = default_config(client, event.repo)
    except BadInputError as exc:
        if is_trigger(event.label, None):
            ctx.forge(client, event.repo).reply(
                None, event.number, start_key(event),
                CANNOT_START.format(exc.message, exc.hint, label=event.label))
        return
    remember_trigger_label(ctx.redis, event.repo, config.trigger_label,  # the web app's filter
                           config.campaign_label)
    if any(plug.labeled(ctx, event, config) for plug in plugs.PLUGS):  # a campaign's label
        return
    if not is_trigger(event.label, config.trigger_label):  # labels are case-insensitive
        return
    start_job(ctx, StartRequest(repo=event.repo, number=event.number,
                                installation_id=event.installation_id, sender=event.sender,
                                sender_id=event.sender_id, key=start_key(event),
                                label=event.label), config)


# -- closes, edits and pushes ---------------------------------------------------------------------
def on_closed(ctx: ServerContext, event: Event) -> None:
    if event.kind is Kind.ISSUE_CLOSED and any(p.issue_closed(ctx, event) for p in plugs.PLUGS):
        return
    job = job_for(ctx, event)
    if job is None or job.is_terminal:
        return
    if event.kind is Kind.PULL_CLOSED and event.merged:
        return
    # Closing is steering: only someone who may cancel the job cancels it by closing.
    client = ctx.installation(event.installation_id)
    if not closed_on_github(client, event):  # a replayed close of a reopened issue
        return
    what = "pull request" if event.kind is Kind.PULL_CLOSED else "issue"
    wiring = ServerWiring(ctx)

    def cancel(current: Job) -> str:
        current.server.cancelled_by = f"@{event.sender} closed the {what}" if event.sender \
            else f"the {what} was closed"
        return usecases.steer(wiring, current, Verb.CANCEL)

    steered = steer(ctx, client, job, Actor(event.sender, event.sender_id), cancel,
                    action=f"cancelling the job by closing the {what}")
    if not steered.permitted:
        ctx.forge(client, event.repo).reply(
            job, event.number, f"closed:{event.delivery_id}",
            CLOSED_BY_OTHER.format(sender=event.sender or "someone", what=what,
                                   reason=steered.refused))
        ctx.store.save(job)  # the comment id the forge remembered


def on_reopened(ctx: ServerContext, event: Event) -> None:
    """The issue or pull request of a cancelled or failed job was reopened: offer to resume
    (an issue a plug holds, a campaign's: the plug answers)."""
    if event.kind is Kind.ISSUE_REOPENED and any(p.issue_reopened(ctx, event) for p in plugs.PLUGS):
        return
    job = job_for(ctx, event)
    if job is not None:
        offer_resume(ctx, event, job)


def on_issue_edited(ctx: ServerContext, event: Event) -> None:
    if any(plug.issue_edited(ctx, event) for plug in plugs.PLUGS):
        return
    job = ctx.store.find(event.repo, event.number)
    if job is None or job.is_terminal:
        return
    try:
        task = parse_issue(event.title, event.body)
    except BadInputError:
        return  # reported when the gate is answered; the running job keeps its approved spec
    if task.spec.digest() == job.spec_digest:
        return
    owner, name = event.repo.split("/", 1)
    role = ctx.installation(event.installation_id).permission(owner, name, event.sender)
    if role not in STEERING_ROLES:
        job.untrusted_spec = True
    note_spec_change(job, title=event.title, body=event.body, now=ctx.clock())
    forge = ctx.forge(ctx.installation(event.installation_id), event.repo)
    if job.gate is not None:
        forge.expect(job, Publication.GATE)  # owed before the job waits
    ctx.store.save(job)
    if job.gate is not None:  # spec_changed: ask on the PR (or the issue) and show it on the card
        forge.publish(job, Publication.GATE, "")
        ctx.store.save(job)
    queue_next_step(ctx, job)


def on_push(ctx: ServerContext, event: Event) -> None:
    if event.kind is Kind.CONFIG_PUSH or (event.kind is Kind.BASE_PUSH and event.config_changed):
        check_config_push(ctx, event)
    if event.kind is Kind.CONFIG_PUSH:
        return
    branch = event.ref.removeprefix("refs/heads/")
    for job_id in ctx.store.job_ids(limit=500):
        job = ctx.store.load_id(job_id)
        if job is None or job.repo != event.repo:
            continue
        if event.kind is Kind.BASE_PUSH and job.base_branch == branch:
            base_moved(ctx, job)
        elif event.kind is Kind.PUSH and job.branch == branch and job.status in ACTIVE:
            queue_next_step(ctx, job)


def base_moved(ctx: ServerContext, job: Job) -> None:
    """The job's base branch moved: an active job looks at it in its next step (queued now);
    a job at a gate is marked and looks when it resumes (jobs/features/base_moves/merge.py)."""
    if job.is_terminal:
        return
    if job.is_active:
        queue_next_step(ctx, job)  # no save: its worker may hold the record right now
        return
    base_pushed(job, ctx.clock(), ctx.features)
    with contextlib.suppress(ConflictError):  # changed meanwhile: its next step reads the base
        ctx.store.save(job)


def handle_event(ctx: ServerContext, payload: dict[str, Any]) -> None:
    event = Event.model_validate(payload)
    routes = {Kind.LABELED: on_labeled, Kind.COMMENT: on_comment,
              Kind.ISSUE_EDITED: on_issue_edited, Kind.ISSUE_CLOSED: on_closed,
              Kind.PULL_CLOSED: on_closed, Kind.ISSUE_REOPENED: on_reopened,
              Kind.PULL_REOPENED: on_reopened, Kind.PUSH: on_push, Kind.BASE_PUSH: on_push,
              Kind.CONFIG_PUSH: on_push,
              Kind.INSTALLATION: end_removed_jobs, Kind.CI: on_ci_event,
              Kind.CHECK_RERUN: on_check_rerun}
    route = routes.get(event.kind)
    if route is not None and event.repo and not event.installation_id:
        # GitHub's schema lets a delivery lack `installation`: ask which one holds the repo.
        owner, name = event.repo.split("/", 1)
        event = event.model_copy(update={"installation_id": ctx.github.installation_id(owner,
                                                                                        name)})
    if route is not None:
        route(ctx, event)


def handle_event_leased(ctx: ServerContext, payload: dict[str, Any]) -> None:
    """Handle a delivery under a lease: if this worker dies, the reaper (or GitHub's
    redelivery) sees the task abandoned and queues it again."""
    with Lease(ctx.redis, event_lease(str(payload.get("delivery_id", ""))),
               ttl_s=ctx.settings.lease_ttl_s):
        try:
            handle_event(ctx, payload)
        except StepwiseError as exc:
            if payload.get("kind") == Kind.LABELED and last_try():
                tell_label_failed(ctx, Event.model_validate(payload), exc)
            raise


def tell_label_failed(ctx: ServerContext, event: Event, exc: StepwiseError) -> None:
    """The last try of a label failed: say so on the issue rather than drop it silently."""
    try:
        forge = ctx.forge(ctx.installation(event.installation_id), event.repo)
        forge.reply(None, event.number, f"label-failed:{event.delivery_id}", LABEL_FAILED.format(
            code=exc.code, message=exc.message, hint=exc.hint.rstrip(".") or "try again later",
            label=event.label))
    except StepwiseError:
        log.exception("could not tell the issue that the label failed",
                      extra={"delivery_id": event.delivery_id})


def handlers(ctx: ServerContext) -> dict[str, Handler]:
    """The task table a worker installs (see bot.server.worker.install_handlers)."""
    return {
        "event": lambda payload: handle_event_leased(ctx, payload),
        steps.STEP_TASK: lambda payload: steps.step_task(ctx, payload),
        "revert": lambda payload: steps.revert(ctx, payload),
        "cancelled": lambda payload: steps.cancelled(ctx, payload),
        "reconcile": lambda payload: reconciler.run_pass(ctx),
    }


__all__ = ["handlers"]
