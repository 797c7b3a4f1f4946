"""The llm feature's guard: a job whose recipe is not `llm` (nor a command's `llm` fallback)
runs none of its hooks and crosses none of its files but the guard (and its pure sections, the
plan's "Model edits" line and the note's "Model usage", which every plan and note asks and which
say nothing without a model)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from jobs.features.base_moves.record import BaseMerge, moves
from jobs.features.ci.record import CiResult, ci
from jobs.features.llm.usage import usage
from jobs.features.llm.wiring import FEATURE
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.kernel.records import Attempt, ModelCall
from jobs.notes.change_note import render_note
from tests.kit.crossed import called_under, run_crossing
from tests.kit.llm import INSTRUCTIONS
from tests.kit.local_e2e import build_sample, issue, issue_markdown, load_job, session
from tests.kit.records import T0, make_batch, make_job


def test_a_replace_job_crosses_nothing_of_the_llm_feature_but_its_guard(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    outcome, seen = run_crossing(lambda: session(repo).run(issue(), yes=True))
    assert outcome.status is JobStatus.COMPLETED
    # its guard, its pure note sections and the figures others read (the forecast's tokens: 0)
    assert called_under(seen, "jobs/features/llm/") == {
        ("jobs/features/llm/wiring.py", "active"), ("jobs/features/llm/wiring.py", "start_check"),
        ("jobs/features/llm/wiring.py", "uses_llm"), ("jobs/features/llm/note.py", "model_usage"),
        ("jobs/features/llm/note.py", "model_edits_lines"),
        ("jobs/features/llm/usage.py", "usage"), ("jobs/features/llm/usage.py", "usage_figures")}
    assert not called_under(seen, "jobs/recipes/llm/")
    assert not FEATURE.active(load_job(repo))


def test_an_llm_job_and_a_command_with_the_llm_fallback_are_the_feature_s() -> None:
    def job_of(**spec: object) -> Job:
        job = make_job()
        job.spec = parse_issue_file(issue_markdown(**spec)).spec
        return job

    assert FEATURE.active(job_of(recipe="llm", replace=None, instructions=INSTRUCTIONS))
    command = {"recipe": "command", "replace": None, "run": "python tools/codemod.py {files}"}
    assert FEATURE.active(job_of(**command, fallback="llm", instructions=INSTRUCTIONS))
    assert not FEATURE.active(job_of(**command))
    assert not FEATURE.active(job_of())  # replace


def test_the_model_usage_sits_after_the_base_merges_and_before_the_ci_section() -> None:
    batch = make_batch(1, status=BatchStatus.COMPLETED, files=["a.py"], commit="1" * 40)
    attempt = Attempt(number=1, started_at=T0, transcript="artifacts/issue-7/t.md", llm_calls=[
        ModelCall(model="m", round=1, files=["a.py"], tokens_in=1200, tokens_out=300)])
    batch.attempts = [attempt]
    job = make_job(batches=[batch], status=JobStatus.COMPLETED)
    spent = usage(job)
    spent.calls, spent.tokens_in, spent.tokens_out, spent.budget_grants = 1, 1200, 300, 1
    moves(job).merges = [BaseMerge(base_sha="2" * 40, commit="3" * 40, at=T0)]
    ci(job).results = [CiResult(scope="milestone", number=1, sha="1" * 40, state="passed", at=T0)]
    note = render_note(job, now=T0 + timedelta(minutes=1))
    at = note.index("## Model usage")
    assert note.index("## Base merges") < at < note.index("## The repository's CI")
    assert ("- 1 model call: 1,200 tokens in, 300 out; the token budget was granted 1 more "
            "time(s)") in note
    assert "- batch 1: 1 model call, 1,500 tokens; transcripts `artifacts/issue-7/t.md`" in note
    usage(job).calls = 0
    assert "## Model usage" not in render_note(job, now=T0)
