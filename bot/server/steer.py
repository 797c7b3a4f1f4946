"""The one way a job is steered on the server. A comment's command (bot/server/comments.py), a
campaign acting on its repositories' jobs (bot/server/campaigns/port.py) and closing the issue or
pull request (bot/server/handlers.py) all call `steer`: it decides whether the actor may (their
permission in the job's repository; with the config's `approvers`, only the accounts on it,
matched by the account ids resolved when the job started, and the members of its teams, who need
write too), then applies the change to the record, saves it and carries the job on, running the
change again on the record as it is now when the reconciler saved it meanwhile.

`may_steer` is that decision alone, for what steers without a job (a campaign, a repository whose
job is not started). Starting a job is decided by bot/server/start_job.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.authz import Decision
from bot.github.client import Installation
from bot.plumbing.keys import cancelled_task_id
from bot.plumbing.queue import enqueue
from bot.server.context import ServerContext
from bot.server.steps import queue_next_step
from bot.steering import steering_decision
from jobs.basics.errors import StepwiseError
from jobs.engine import usecases
from jobs.kernel.gates import RefusedError, Verb
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from jobs.ports import ConflictError

STEER_TRIES = 3  # a change is run again this often on a record the reconciler saved meanwhile


@dataclass(frozen=True)
class Actor:
    """Who steers: a GitHub login and its account id (from the webhook's sender; 0 when the
    delivery had none, then looked up when the approvers list needs it)."""

    login: str
    id: int = 0

    @property
    def mention(self) -> str:
        return f"@{self.login}"


@dataclass(frozen=True)
class Steered:
    """What `steer` did: the change's answer, or why nothing changed (`refused`, with the
    refusal's `hint`). `job` is the record as the change left it, None when the change failed
    part-way (its copy may hold unsaved changes: read it again)."""

    job: Job | None
    said: str = ""
    refused: str = ""
    hint: str = ""
    permitted: bool = True  # False: the actor may not steer this job (nothing was tried)

    @property
    def done(self) -> bool:
        return not self.refused


Change = Callable[[Job], str]  # applies itself to the record it is given; RefusedError: no


class ServerWiring:
    """The server's `usecases.Wiring` for a steered job: save the record, then queue the job's
    next step (or the end of a cancelled job)."""

    def __init__(self, ctx: ServerContext) -> None:
        self.ctx = ctx

    def save(self, job: Job) -> None:
        self.ctx.store.save(job)

    def go_on(self, job: Job) -> None:
        if job.status is JobStatus.CANCELLED:
            enqueue(self.ctx.redis, "cancelled", {"job_id": job.id},
                    job_id=cancelled_task_id(job.id))
        else:
            queue_next_step(self.ctx, job)

    def revert(self, job: Job, batch: int) -> None:
        enqueue(self.ctx.redis, "revert", {"job_id": job.id, "batch": batch})


def may_steer(client: Installation, repo: str, actor: Actor, *, action: str,
              approvers: Sequence[str] = (),
              approver_ids: Mapping[str, int] | None = None) -> Decision:
    """May `actor` do `action` (words for a refusal: "`/stepwise cancel`") in `repo`, whose
    config lists `approvers` (resolved to `approver_ids` when the job or campaign started)?"""
    return steering_decision(client, repo, login=actor.login, approvers=approvers,
                             action=action, actor_id=actor.id, approver_ids=approver_ids)


def verb(ctx: ServerContext, answer: Verb, *, by: str = "") -> Change:
    """The change that answers the open gate with `answer` (or cancels), saves and carries on."""
    return lambda job: usecases.steer(ServerWiring(ctx), job, answer, by=by)


def steer(ctx: ServerContext, client: Installation, job: Job, actor: Actor, change: Change, *,
          action: str) -> Steered:
    """Apply `change` to `job` if `actor` may steer it (`action`: what they asked, in words)."""
    decision = may_steer(client, job.repo, actor, action=action, approvers=job.config.approvers,
                         approver_ids=job.server.approver_ids)
    if not decision.allowed:
        return Steered(job, refused=decision.reason, permitted=False)
    for attempt in range(STEER_TRIES):
        try:
            return Steered(job, said=change(job))
        except ConflictError:
            if attempt == STEER_TRIES - 1:
                raise  # the task is retried
            job = ctx.store.load_id(job.id) or job
        except RefusedError as exc:  # nothing changed
            return Steered(job, refused=exc.message, hint=exc.hint)
        except StepwiseError as exc:  # the copy may hold unsaved changes
            return Steered(None, refused=exc.message, hint=exc.hint)
    raise AssertionError("unreachable")  # the loop returns
