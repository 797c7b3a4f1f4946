"""Each verb's handler, through the CommandContext it is given (a recording one here), and the
registry's promise: one module per verb, each listed once."""

from __future__ import annotations

import pkgutil

import pytest

import bot.commands
from bot.commands import COMMANDS, Access, Command, spec_for
from jobs.inputs.config import RepoConfig
from jobs.kernel.gates import RefusedError
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.jobs.kernel.test_gates import gated_job
from tests.kit.records import make_job

NOT_VERBS = {"parser", "registry", "spec"}


class Recorder:
    """A CommandContext that records what a handler asked for."""

    def __init__(self) -> None:
        self.effects: list[str] = []

    actor = "@octocat"

    def help_table(self) -> str:
        return "the table"

    def card(self, job: Job) -> str:
        return f"card of {job.id}"

    def save(self, job: Job) -> None:
        self.effects.append(f"save:{job.status}")

    def go_on(self, job: Job) -> None:
        self.effects.append(f"go_on:{job.status}")

    def revert(self, job: Job, batch: int) -> None:
        self.effects.append(f"revert:{batch}")

    def plugged(self, command: Command) -> str:
        self.effects.append(f"{command.verb}:{command.argument}")
        return f"steered: {command.argument}"

    def resume(self, job: Job) -> str:
        self.effects.append(f"resume:{job.status}")
        return "resumed"

    def retry_start(self) -> str:
        self.effects.append("retry-start")
        return ""

    def default_config(self, job: Job) -> RepoConfig:
        self.effects.append("read-config")
        return RepoConfig(batch_size=9, validate=["python -m pytest"])


def run(verb: str, job: Job | None, argument: str = "") -> tuple[str, list[str]]:
    spec = spec_for(verb)
    assert spec is not None
    context = Recorder()
    reply = spec.handle(context, job, Command(verb=verb, argument=argument, line=1, raw=verb))
    return reply, context.effects


def test_every_verb_module_is_registered_once() -> None:
    modules = {m.name for m in pkgutil.iter_modules(bot.commands.__path__)} - NOT_VERBS
    assert sorted(spec.verb.replace("-", "_") for spec in COMMANDS) == sorted(modules)


# The verbs of the commands' own modules; a feature's verb is tested with the feature
# (its file is in its Removal, scripts/removal_drill.py), and goes with it.
OWN_VERBS = {"approve", "retry", "skip", "cancel", "revert", "instruct", "status", "help",
             "reload-config", "resume", "retry-start"}


def test_who_may_use_each_verb_and_which_answer_a_gate() -> None:
    own = [s for s in COMMANDS if s.verb in OWN_VERBS]
    assert {s.verb for s in own} == OWN_VERBS  # each is registered
    # `retry-start` as a label is authorized, by the start (bot/server/start_job.py).
    assert {s.verb for s in own if s.access is Access.ANYONE} == {"status", "help", "retry-start"}
    assert {s.verb for s in own if s.answers_gate} == {"approve", "retry", "skip",
                                                       "reload-config"}
    assert {s.verb for s in own if not s.needs_job} == {"help", "retry-start"}


def test_approve_passes_the_gate_saves_and_advances() -> None:
    job = gated_job(Gate.PLAN)
    assert run("approve", job) == ("", ["save:running", "go_on:running"])
    assert job.gate is None and job.approved_digest == job.spec_digest


def test_skip_records_the_reason() -> None:
    job = gated_job(Gate.FAILURE, batch_status=BatchStatus.FAILED)
    assert run("skip", job, "generated code") == ("", ["save:running", "go_on:running"])
    assert job.batch(2).status is BatchStatus.SKIPPED and job.batch(2).reason == "generated code"


def test_a_verb_the_gate_does_not_take_is_refused_and_nothing_is_saved() -> None:
    job = gated_job(Gate.PLAN)
    context = Recorder()
    spec = spec_for("retry")
    assert spec is not None
    with pytest.raises(RefusedError, match="does not apply"):
        spec.handle(context, job, Command(verb="retry", argument="", line=1, raw="retry"))
    assert context.effects == [] and job.status is JobStatus.AWAITING_HUMAN


def test_cancel_at_a_gate_cancels_and_go_on_is_asked_to_finish_it() -> None:
    job = gated_job(Gate.MILESTONE)
    assert run("cancel", job) == ("", ["save:cancelled", "go_on:cancelled"])


def test_instruct_keeps_the_text_and_revert_queues_the_batch() -> None:
    job = gated_job(Gate.PLAN)
    assert run("instruct", job, "keep error output at error level") == ("", ["save:awaiting_human"])
    assert job.instructions == ["keep error output at error level"]
    assert run("revert", job, "2") == ("", ["revert:2"])


def test_status_and_help_answer_without_changing_anything() -> None:
    job = gated_job(Gate.PLAN)
    assert run("status", job) == (f"card of {job.id}", [])
    assert run("help", None) == ("the table", [])


def test_status_on_a_working_or_interrupted_job_says_what_it_is_doing() -> None:
    working = make_job(status=JobStatus.RUNNING)
    assert run("status", working) == (f"card of {working.id}\n\njob is running", [])
    interrupted = make_job(status=JobStatus.INTERRUPTED)
    reply, effects = run("status", interrupted)
    assert reply.startswith(f"card of {interrupted.id}\n\n") and effects == []
    assert "it resumes by itself" in reply


def test_reload_config_at_the_plan_gate_takes_the_default_branch_config_and_plans_again() -> None:
    job = gated_job(Gate.PLAN)
    reply, effects = run("reload-config", job)
    assert effects == ["read-config", "save:planning", "go_on:planning"]
    assert "config reloaded; planning again" in reply
    assert job.config.batch_size == 9 and job.gate is None and job.baseline_ok is None


def test_reload_config_after_approval_is_refused_and_nothing_is_saved() -> None:
    job = gated_job(Gate.MILESTONE)
    context = Recorder()
    spec = spec_for("reload-config")
    assert spec is not None
    with pytest.raises(RefusedError, match="only at the plan gate; the `milestone` gate"):
        spec.handle(context, job, Command(verb="reload-config", argument="", line=1,
                                          raw="reload-config"))
    assert context.effects == ["read-config"] and job.status is JobStatus.AWAITING_HUMAN
