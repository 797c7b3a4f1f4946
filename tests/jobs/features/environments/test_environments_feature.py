"""The environments feature's guard: a job whose config has no `setup` runs none of its hooks
and crosses none of its files but the guard (and its pure parts every job asks: the plan
section, which says nothing without `setup`, and the baseline key's input, its empty key); a
job with `setup` is the feature's, and its plan says what `setup` built."""

from __future__ import annotations

from pathlib import Path

from jobs.features.environments.wiring import FEATURE
from jobs.kernel.model import JobStatus
from jobs.notes.progress import render_plan
from tests.kit.crossed import called_under, run_crossing
from tests.kit.local_e2e import build_sample, config_text, issue, load_job, session


def test_a_job_without_setup_crosses_nothing_of_the_feature_but_its_guard(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    outcome, seen = run_crossing(lambda: session(repo).run(issue(), yes=True))
    assert outcome.status is JobStatus.COMPLETED
    assert called_under(seen, "jobs/features/environments/") == {
        ("jobs/features/environments/wiring.py", "active"),
        ("jobs/features/environments/texts.py", "setup_lines"),
        ("jobs/features/environments/record.py", "baseline_inputs"),
        ("jobs/features/environments/record.py", "environment_of")}
    assert "- Setup:" not in render_plan(load_job(repo))
    # Local mode wires the cache (the object is made); the job never asks it for anything.
    assert called_under(seen, "jobs/adapters/environments.py") == {
        ("jobs/adapters/environments.py", "__init__"),
        ("jobs/adapters/environments.py", "cache_limit_bytes")}
    assert not FEATURE.active(load_job(repo))


def test_a_job_with_setup_is_the_feature_s(tmp_path: Path) -> None:
    config = config_text(setup=["python -c pass"])
    repo = build_sample(tmp_path / "repo", config=config)
    outcome = session(repo).run(issue(), yes=True)
    job = load_job(repo)
    assert outcome.status is JobStatus.COMPLETED and FEATURE.active(job)
    plan = render_plan(job).splitlines()
    setup = next(n for n, line in enumerate(plan) if line.startswith("- Setup: `python -c pass`"))
    assert "environment built for this job (key `" in plan[setup]
    branch = next(n for n, line in enumerate(plan) if line.startswith("- Branch:"))
    assert branch < setup  # the features' plan lines follow the branch
