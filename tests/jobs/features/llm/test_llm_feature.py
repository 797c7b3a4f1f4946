"""The llm feature's guard: a job whose recipe is not `llm` (nor a command's `llm` fallback)
runs none of its hooks and crosses none of its files but the guard (and the note's "Model
usage" section, a pure part every change note asks, empty without a model call)."""

from __future__ import annotations

from pathlib import Path

from jobs.domain.job import Job
from jobs.domain.model import JobStatus
from jobs.domain.spec import parse_issue_file
from jobs.features.llm.wiring import FEATURE
from tests.kit.crossed import called_under, run_crossing
from tests.kit.llm import INSTRUCTIONS
from tests.kit.local_e2e import build_sample, issue, issue_markdown, load_job, session
from tests.kit.records import make_job


def test_a_replace_job_crosses_nothing_of_the_llm_feature_but_its_guard(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    outcome, seen = run_crossing(lambda: session(repo).run(issue(), yes=True))
    assert outcome.status is JobStatus.COMPLETED
    assert called_under(seen, "jobs/features/llm/") == {
        ("jobs/features/llm/wiring.py", "active"), ("jobs/features/llm/wiring.py", "start_check"),
        ("jobs/features/llm/wiring.py", "uses_llm"), ("jobs/features/llm/note.py", "model_usage")}
    assert not called_under(seen, "jobs/editors/llm/")
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
