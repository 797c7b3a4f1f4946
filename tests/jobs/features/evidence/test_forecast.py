"""The forecast (issue 39, item 5): the plan states the validation runs expected (with the budget
of retries and splits), the wall time and, for recipe llm, the model tokens, from the baseline
and what earlier jobs on the repository measured; the change note sets it against the actual."""

from __future__ import annotations

from pathlib import Path

from jobs.features.evidence.forecast import (
    History,
    Measured,
    actual,
    forecast,
    split_budget,
)
from jobs.features.evidence.forecast_store import read_history
from jobs.features.evidence.record import job_evidence
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import JobStatus
from jobs.local import LocalSession
from tests.kit.local_e2e import NUMBER, Recorder, build_sample, issue, load_job, show


def test_the_plan_states_the_forecast_and_the_note_sets_it_against_the_actual(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    sink = Recorder()
    LocalSession(repo, NUMBER, sink=sink).run(issue(), yes=True)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    plan = "\n".join(text for _, text in sink.seen)
    budget = 3 * (2 + 2)  # 3 batches of 2 files: 2 attempts each, 2 subsets of a split
    assert f"- forecast: 3 validation runs (one a batch; at most {budget} with every retry " \
        "`max_failed_attempts` allows and the splits of failing batches), about " in plan
    assert "from the baseline run" in plan and "earlier job" not in plan
    stated = job_evidence(job).forecast
    assert stated is not None and stated.runs == 3
    done = actual(job)
    assert done is not None and done.runs == 3
    note = show(repo, job.branch, job.note_path)
    assert "forecast against actual: validation runs 3 expected, 3 run; wall time about " in note


def test_an_earlier_job_s_figures_inform_the_next_forecast(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    LocalSession(repo, NUMBER, sink=Recorder()).run(issue(), yes=True)
    measured = read_history(repo / ".git" / "stepwise" / "evidence" / "measured.json")
    assert [m.job for m in measured] == [f"issue-{NUMBER}"] and measured[0].runs_per_batch == 1.0
    sink = Recorder()
    LocalSession(repo, NUMBER + 1, sink=sink).run(issue(), yes=True)  # the base is unchanged
    seen = "\n".join(text for _, text in sink.seen)
    assert "from the baseline run and 1 earlier job on this repository" in seen


def test_an_unreadable_history_is_an_empty_one(tmp_path: Path) -> None:
    path = tmp_path / "measured.json"
    path.write_text("{not json")
    assert read_history(path) == []
    assert read_history(tmp_path / "missing.json") == []


def test_llm_tokens_come_from_earlier_jobs_or_else_the_files_size(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    LocalSession(repo, NUMBER, sink=Recorder()).run(issue(), yes=True)
    job = load_job(repo)
    for batch in job.batches:
        batch.commit = None  # as planned, before any batch ran
    job.spec = parse_issue_file("# t\n\n```stepwise\nrecipe: llm\npaths: ['calc/**/*.py']\n"
                                "instructions: use new_sum\n```\n").spec
    earlier = Measured(job="issue-1", batches=4, runs_per_batch=1.5, run_s=2.0,
                       edit_s_per_batch=10.0, tokens_per_batch=12_000.0)
    stated = forecast(job, History(jobs=[earlier]))
    assert stated is not None
    assert (stated.runs, stated.tokens) == (round(3 * 1.5), 36_000)
    assert stated.basis == "the baseline run and 1 earlier job on this repository"
    guessed = forecast(job, History(scope_bytes=12_000))
    assert guessed is not None and guessed.tokens == round(12_000 * 0.25 * 3 / 3 * 3)
    assert guessed.basis.endswith("no earlier job measured tokens, so from the files' size")


def test_the_split_budget_halves_until_one_file() -> None:
    assert [split_budget(n) for n in (1, 2, 3, 4, 8, 9)] == [0, 2, 4, 4, 6, 8]
