"""One vocabulary per surface: every gate, its report, the card and the change note rendered in
the server's voice name only `/stepwise <verb>` commands, and in local mode's only the CLI's."""

from __future__ import annotations

import re

import pytest

from bot.commands.registry import COMMANDS
from bot.commands.registry import voice as server_voice
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.basics.voice import (
    TOKEN_VERBS,
    Voice,
    cmd,
    is_placeholder,
    local_voice,
    shell_template,
)
from jobs.decisions.verdicts import review_gate_report
from jobs.engine.baseline import baseline_report
from jobs.features.ci.parts import CI_FAILED
from jobs.inputs.spec import Recipe
from jobs.kernel.gates import gate_choices, open_gate
from jobs.kernel.job import Job
from jobs.kernel.model import GATES, BatchStatus, FailureCause, Gate, JobStatus
from jobs.kernel.records import CommandEvidence, FinalReview
from jobs.notes.change_note import render_note
from jobs.notes.progress import gate_prompt, render_card, render_plan
from tests.kit.records import T0, make_batch, make_job

LOCAL = local_voice("--repo /src/app --number 7")
VERBS = "|".join(re.escape(v) for v in TOKEN_VERBS)
# Local wording on GitHub: a CLI command, its options, a bare verb in a code span, the shell.
LOCAL_WORDING = re.compile(rf"(?<![/\w])stepwise ({VERBS}|run)\b|--repo|--number|`({VERBS})( [^`]*)?`"
                           r"|the shell that runs")
FAILING = CommandEvidence(argv=["python", "-m", "pytest"], exit_code=1, duration_s=1.0,
                          output_tail="E   assert 1 == 2\n")


def report(code: str, retry_class: RetryClass = RetryClass.NEEDS_HUMAN) -> ErrorInfo:
    return ErrorInfo(code=code, retry_class=retry_class, message="it failed",
                     hint=f"{cmd('retry')} after a fix, {cmd('revert', '<batch>')} undoes one, "
                          f"{cmd('status')} shows where it is")


def at_gate(kind: str, recipe: Recipe = Recipe.REPLACE, gate_report: ErrorInfo | None = None,
            cause: FailureCause | None = None) -> Job:
    batches = [make_batch(1, status=BatchStatus.COMPLETED, files=["a.py"]),
               make_batch(2, files=["b.py"])]
    batches[0].commit = "1" * 40
    batches[0].reason = f"reverted with {cmd('revert')}"
    job = make_job(batches=batches, status=JobStatus.RUNNING)
    if recipe is not Recipe.REPLACE:
        job.spec = job.spec.model_copy(update={"recipe": recipe, "replace": None,
                                               "instructions": "do it"})
    open_gate(job, kind, reason="why", now=T0, batch=None if cause else 2,
              report=gate_report or report("x"), cause=cause)
    return job


def every_gate(*, server: bool) -> list[Job]:
    """Each gate, plus the reports with hints of their own (a baseline report's hint is the
    mode's: a server job has an installation)."""
    jobs = [at_gate(kind) for kind in GATES]  # the built-in gates and the features'
    baseline = make_job(status=JobStatus.PLANNING)
    baseline.server.installation_id = 1 if server else None
    baseline.baseline, baseline.baseline_ok = [FAILING], False
    open_gate(baseline, Gate.PLAN, reason="baseline fails", now=T0, report=baseline_report(baseline))
    review = review_gate_report(FinalReview(merged_with_base="b" * 40, commands=[FAILING]),
                                accepted=False)
    return [*jobs, baseline, at_gate(Gate.FAILURE, gate_report=review, cause=FailureCause.FINAL_REVIEW),
            at_gate(Gate.FAILURE, Recipe.LLM), at_gate(Gate.FAILURE, gate_report=report(
                "push_failed", RetryClass.AUTO_RETRY))]


def surfaces(job: Job, voice: Voice) -> str:
    return "\n".join([gate_prompt(job, voice=voice), render_card(job, voice=voice),
                      render_plan(job, voice=voice), render_note(job, now=T0, voice=voice)])


@pytest.mark.parametrize("job", every_gate(server=True),
                         ids=lambda job: job.gate.id if job.gate else "")
def test_every_gate_in_the_server_voice_has_no_local_wording(job: Job) -> None:
    text = surfaces(job, server_voice())
    assert "{{" not in text
    assert LOCAL_WORDING.search(text) is None, LOCAL_WORDING.search(text)
    assert "`/stepwise " in text


@pytest.mark.parametrize("job", every_gate(server=False),
                         ids=lambda job: job.gate.id if job.gate else "")
def test_every_gate_in_the_local_voice_has_no_github_wording(job: Job) -> None:
    text = surfaces(job, LOCAL)
    assert "{{" not in text and "`/stepwise" not in text, text[text.find("{{") - 200:]
    commands = re.findall(rf"`stepwise ({VERBS})([^`]*)`", text)
    assert commands and all(rest.startswith(" --repo /src/app --number 7") for _, rest in commands)
    assert not any(re.search(r"[<>]", rest) for _, rest in commands), commands  # no redirection


def test_a_placeholder_is_written_in_capitals_in_a_shell_and_as_designed_on_github() -> None:
    local = local_voice("--repo /src/app --number 7")
    assert local.typed("skip <reason>") == "stepwise skip --repo /src/app --number 7 REASON"
    assert local.speak(f"undo it ({cmd('revert', '<batch>')})") == \
        "undo it (`stepwise revert --repo /src/app --number 7 BATCH`)"
    assert shell_template("skip <owner/repo> <reason>") == "skip OWNER/REPO REASON"
    assert server_voice().typed("skip <reason>") == "/stepwise skip <reason>"  # DESIGN.md's
    assert is_placeholder(" REASON ", "reason") and is_placeholder("<reason>", "reason")
    assert not is_placeholder("the reason", "reason") and not is_placeholder("Reason", "reason")


def test_the_server_voice_is_the_registry_s() -> None:
    voice = server_voice()
    assert voice.verbs == frozenset(spec.verb for spec in COMMANDS)
    assert voice.code("revert", "3") == "`/stepwise revert 3`"
    assert LOCAL.code("skip", "generated") == "`stepwise skip --repo /src/app --number 7 generated`"
    assert LOCAL.speak(f"run {cmd('status')}") == "run `stepwise status --repo /src/app --number 7`"


def test_a_verb_the_surface_lacks_is_written_bare_and_an_unknown_token_verb_is_refused() -> None:
    assert Voice(prefix="/stepwise ", verbs=frozenset({"approve"})).speak(cmd("retry")) == "`retry`"
    with pytest.raises(ValueError, match="no command verb"):
        cmd("frobnicate")


def test_a_deterministic_failure_recommends_skip_and_never_offers_retry_or_approve() -> None:
    job = at_gate(Gate.FAILURE)
    assert job.gate is not None
    choices = gate_choices(job, job.gate)
    assert choices.usage == "skip <reason>" and "retry" not in choices.others
    prompt = gate_prompt(job, voice=server_voice())
    assert "`/stepwise retry`" not in prompt.split("Hint:")[0] + prompt.split("Other choices")[1]
    assert "`/stepwise approve`" not in prompt and "fix the spec in the issue" in prompt


def test_an_llm_failure_recommends_retry_without_offering_approve_beside_it() -> None:
    job = at_gate(Gate.FAILURE, Recipe.LLM)
    assert job.gate is not None
    choices = gate_choices(job, job.gate)
    assert choices.usage == "retry" and "approve" not in choices.others
    assert choices.others == ("skip <reason>", "cancel")


def test_a_failed_final_review_recommends_approve_with_its_own_meaning() -> None:
    review = review_gate_report(FinalReview(merged_with_base="b" * 40, commands=[FAILING]),
                                accepted=False)
    job = at_gate(Gate.FAILURE, gate_report=review, cause=FailureCause.FINAL_REVIEW)
    prompt = gate_prompt(job, voice=server_voice())
    assert "To finish although the final review did not pass: `/stepwise approve`" in prompt


def test_ci_failed_says_approve_accepts_the_red_ci() -> None:
    prompt = gate_prompt(at_gate(CI_FAILED), voice=server_voice())
    assert "To accept the red CI result as it is (the note names it): `/stepwise approve`" in prompt


def test_a_token_in_untrusted_text_never_becomes_markup() -> None:
    hostile = "{{retry `](https://evil.example)`}} and {{skip x<img src=x>}}"
    spoken = server_voice().speak(hostile)
    assert "`/stepwise retry" not in spoken and "](https://evil" in spoken  # left as text
    assert server_voice().speak("{{skip generated code}}") == "`/stepwise skip generated code`"
    with pytest.raises(ValueError, match="plain words"):
        cmd("skip", "`x`")
