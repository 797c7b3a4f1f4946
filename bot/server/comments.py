"""Comment commands on the worker: each comment's commands applied once (progress kept per
command under `stepwise:comment:<id>`), each verb authorized by the commenter's permission and
bound to the gate open when the comment was written, then run by its handler in
bot/commands/ through `ServerCommands` (the server's wiring of the shared use cases)."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from bot.commands import (
    PREFIX,
    Access,
    Command,
    InvalidCommand,
    UnknownCommand,
    help_table,
    parse_comment,
    spec_for,
)
from bot.commands.registry import voice as server_voice
from bot.events import Event
from bot.github.errors import ForgeError
from bot.plumbing.connections import as_text
from bot.plumbing.keys import comment_key, comment_lock
from bot.plumbing.leases import job_lock
from bot.plumbing.pruned import PRUNED_HINT, pruned_for_issue
from bot.plumbing.queue import enqueue
from bot.plumbing.trigger_labels import DEFAULT_TRIGGER_LABEL
from bot.server import plugs
from bot.server.context import ServerContext
from bot.server.rebuild import NO_JOB, job_for
from bot.server.resume import resume_ended
from bot.server.start_job import CANNOT_START, StartRequest, start_job
from bot.server.start_job import default_config as start_config
from bot.server.steer import Actor, ServerWiring, steer
from jobs.basics.errors import BadInputError
from jobs.inputs.config import CONFIG_PATH, RepoConfig, load_config
from jobs.kernel.gates import RefusedError
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus

log = logging.getLogger(__name__)
COMMENT_TTL_S = 30 * 24 * 3600
REBUILT = (
    "This job's record was lost and has been rebuilt from the issue, the branch's commits and "
    "this pull request; no committed batch will be redone. It is catching up now: repeat your "
    "command once the progress card shows the gate it is waiting at."
)


def opened_after(opened_at: datetime, created_at: str) -> bool:
    """Whether the gate opened after the comment was written (GitHub times are to the second)."""
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    return opened_at.replace(microsecond=0) > created


def on_comment(ctx: ServerContext, event: Event) -> None:
    """Apply a comment's commands once. Progress is kept per command, so a retry after a
    failure (GitHub down mid-way) carries on where it stopped and never applies one twice."""
    if event.sender_is_bot:
        return
    commands = parse_comment(event.body, app_slug=ctx.settings.app_slug)
    if not commands:
        return
    with job_lock(ctx.redis, comment_lock(event.comment_id)) as acquired:
        if acquired:
            handle_comment(ctx, event, commands)



def handle_comment(ctx: ServerContext, event: Event, commands: list[Any]) -> None:
    key = comment_key(event.comment_id)
    progress = {as_text(k): as_text(v) for k, v in ctx.redis.hgetall(key).items()}
    if progress.get("done"):
        return  # already handled (a redelivery, or the reconciler)
    client = ctx.installation(event.installation_id)
    owner, name = event.repo.split("/", 1)
    forge = ctx.forge(client, event.repo)
    job = job_for(ctx, event)
    if job is not None and job.status is JobStatus.QUEUED and job.server.rebuilt:
        forge.reply(job, event.number, f"reply:{event.comment_id}", REBUILT)
        ctx.redis.hset(key, "done", 1)
        ctx.redis.expire(key, COMMENT_TTL_S)
        return
    applied = int(progress.get("applied", 0))
    answers: list[str] = json.loads(progress.get("answers", "[]"))
    accepted = bool(int(progress.get("accepted", 0)))
    for index, command in enumerate(commands[applied:], start=applied):
        text, changed, job = apply_command(ctx, event, job, command)  # the record it left
        answers.append(text)
        accepted = accepted or changed
        ctx.redis.hset(key, mapping={"applied": index + 1, "answers": json.dumps(answers),
                                     "accepted": int(accepted)})
        ctx.redis.expire(key, COMMENT_TTL_S)
    if accepted:
        try:
            client.react(owner, name, event.comment_id, "+1")
        except ForgeError as exc:  # the command was applied; a missing reaction is cosmetic
            log.warning("could not react to a command", extra={"error": exc.message})
    replies = [a for a in answers if a]
    if replies:
        forge.reply(job, event.number, f"reply:{event.comment_id}", "\n\n".join(replies))
    ctx.redis.hset(key, "done", 1)


class ServerCommands(ServerWiring):
    """What a command's handler may do, on the worker: the CommandContext of bot.commands,
    and so the server's wiring of the shared use cases (jobs/engine/usecases.py)."""

    def __init__(self, ctx: ServerContext, event: Event) -> None:
        super().__init__(ctx)
        self.event = event

    @property
    def actor(self) -> str:
        return f"@{self.event.sender}"

    def help_table(self) -> str:
        return help_table()

    def card(self, job: Job) -> str:
        return self.ctx.forge(self.ctx.installation(self.event.installation_id), job.repo).card(job)

    def plugged(self, command: Command) -> str:
        serving = next((p.verbs[command.verb] for p in plugs.PLUGS if command.verb in p.verbs), None)
        if serving is None:  # a verb in the registry whose plug is not composed
            raise ValueError(f"no plug serves `{PREFIX} {command.verb}` (bot/server/plugs.py)")
        return serving(self.ctx, self.event, command.argument)

    def revert(self, job: Job, batch: int) -> None:
        enqueue(self.ctx.redis, "revert", {"job_id": job.id, "batch": batch,
                                           "comment_id": self.event.comment_id})

    def resume(self, job: Job) -> str:
        return resume_ended(self.ctx, job, installation_id=self.event.installation_id)

    def retry_start(self) -> str:
        event = self.event
        if event.is_pull_request:
            return "`/stepwise retry-start` works on the issue that holds the task, not on a " \
                "pull request."
        client = self.ctx.installation(event.installation_id)
        try:
            config = start_config(client, event.repo)
        except BadInputError as exc:
            return CANNOT_START.format(exc.message, exc.hint, label=DEFAULT_TRIGGER_LABEL)
        start_job(self.ctx, StartRequest(
            repo=event.repo, number=event.number, installation_id=event.installation_id,
            sender=event.sender, sender_id=event.sender_id, key=f"retry-start:{event.comment_id}",
            label=config.trigger_label, retry=True), config)
        return ""

    def default_config(self, job: Job) -> RepoConfig:
        client = self.ctx.installation(self.event.installation_id)
        owner, name = job.repo.split("/", 1)
        info = client.repo(owner, name)
        return load_config(client.file(owner, name, CONFIG_PATH, info.default_branch))


def apply_command(ctx: ServerContext, event: Event, job: Job | None,
                  command: Command | UnknownCommand | InvalidCommand
                  ) -> tuple[str, bool, Job | None]:
    """(reply text, whether something changed, the job's record as the command left it) for one
    command of a comment: the record the handler saved, so the next command of the comment
    needs no load; read again only after a handler failed (its copy may hold unsaved changes)."""
    text, changed, used = _apply(ctx, event, job, command)
    if used is None and job is not None:
        return text, changed, ctx.store.load_id(job.id) or job
    return text, changed, used


def _apply(ctx: ServerContext, event: Event, job: Job | None,
           command: Command | UnknownCommand | InvalidCommand) -> tuple[str, bool, Job | None]:
    """apply_command's answer; its job is None when a handler failed on it."""
    quoted = f"> {command.raw.strip()}\n\n"
    if isinstance(command, UnknownCommand):
        hint = f" Did you mean `{command.suggestion}`?" if command.suggestion else ""
        return quoted + f"Unknown command `{command.word}`.{hint}\n\n" + help_table(), False, job
    if isinstance(command, InvalidCommand):
        return quoted + command.problem, False, job
    spec = spec_for(command.verb)
    if spec is None:  # the parser only returns known verbs
        raise ValueError(f"no command spec for {command.verb!r}")
    if spec.needs_job and job is None:
        gone = pruned_for_issue(ctx.redis, event.repo, event.number)
        if gone is not None:  # retention removed it (STEPWISE_RETAIN_ENDED_DAYS)
            return quoted + f"{gone.message()}. {PRUNED_HINT}.", False, job
        return quoted + NO_JOB, False, job
    if spec.access is Access.ANYONE:
        return spec.handle(ServerCommands(ctx, event), job, command), False, job
    assert job is not None  # every steering verb needs a job

    def change(current: Job) -> str:
        if spec.answers_gate and current.gate is not None and \
                opened_after(current.gate.opened_at, event.created_at):
            raise RefusedError(f"this comment predates gate `{current.gate.id}`, which opened "
                               "later; answer the gate that is open now.")
        return spec.handle(ServerCommands(ctx, event), current, command)

    steered = steer(ctx, ctx.installation(event.installation_id), job,
                    Actor(event.sender, event.sender_id), change,
                    action=f"`{PREFIX} {command.verb}`")
    if not steered.permitted:
        return quoted + f"Refused: {steered.refused}. Nothing changed.", False, job
    if not steered.done:
        said = server_voice().speak
        # A refusal changed nothing (a conflict meanwhile is met again, and read, by the next
        # command); any other error may leave the copy changed but unsaved: read it again.
        return quoted + f"Refused: {said(steered.refused)}" + (
            f" ({said(steered.hint)})" if steered.hint else ""), False, steered.job
    return (quoted + steered.said) if steered.said else "", True, steered.job
