"""CI verdicts from check runs and commit statuses: required names, re-runs, failures, timeouts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from jobs.decisions.ci import CheckObservation, CiState, RequiredFrom, from_commit_status
from jobs.features.ci.rules import CiRequirement, ci_verdict, expects_ci

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(minutes=60)
OWN_APP_ID, ACTIONS_APP_ID = 4242, 15368


def run(name: str, status: str = "completed", conclusion: str | None = "success", *,
        app: str = "github-actions", run_id: int = 1, app_id: int = 0) -> CheckObservation:
    app_id = app_id or (OWN_APP_ID if app == "stepwise" else ACTIONS_APP_ID)
    return CheckObservation(name, status, conclusion, f"https://ci/{name}/{run_id}", app, run_id,
                            app_id)


def verdict(observed: list[CheckObservation], requirement: CiRequirement | None = None,
            minutes: float = 1):
    return ci_verdict(requirement or CiRequirement(own_app_id=OWN_APP_ID), observed,
                      waiting_since=T0, now=T0 + timedelta(minutes=minutes), timeout=HOUR)


def test_every_check_but_stepwise_own_when_nothing_is_configured() -> None:
    observed = [run("test"), run("lint", "in_progress", None),
                run("Stepwise", "in_progress", None, app="stepwise"),
                run("Stepwise / batch 2", app="stepwise")]
    found = verdict(observed)
    assert found.state is CiState.PENDING and found.required_from is RequiredFrom.OBSERVED
    assert [c.name for c in found.checks] == ["test", "lint"]
    assert found.progress() == "waiting for CI: 1 of 2 checks done"
    done = verdict([*observed[:1], run("lint", run_id=2), *observed[2:]])
    assert done.state is CiState.PASSED and done.progress() == "CI passed (2 checks)"


def test_configured_names_beat_protection_and_missing_ones_wait() -> None:
    requirement = CiRequirement(configured=("build",), protected=("test",))
    found = verdict([run("test")], requirement)
    assert found.required_from is RequiredFrom.CONFIG
    assert found.state is CiState.PENDING and found.missing == ("build",)
    protected = verdict([run("test"), run("extra", conclusion="failure")],
                        CiRequirement(protected=("test",)))
    assert protected.state is CiState.PASSED  # a check nobody requires does not block


def test_a_failure_names_the_check_and_the_newest_rerun_counts() -> None:
    failed = verdict([run("test", conclusion="failure", run_id=5), run("lint")])
    assert failed.state is CiState.FAILED and failed.progress() == "CI failed: `test`"
    assert failed.failing[0].url == "https://ci/test/5"
    rerun = verdict([run("test", conclusion="failure", run_id=5), run("lint"),
                     run("test", "in_progress", None, run_id=6)])
    assert rerun.state is CiState.PENDING
    for conclusion, state in [("neutral", CiState.PASSED), ("skipped", CiState.PASSED),
                              ("cancelled", CiState.FAILED), ("timed_out", CiState.FAILED),
                              ("action_required", CiState.FAILED)]:
        assert verdict([run("test", conclusion=conclusion)]).state is state, conclusion


def test_commit_statuses_count_like_checks() -> None:
    assert from_commit_status("ci/jenkins", "pending").status == "in_progress"
    assert from_commit_status("ci/jenkins", "error").conclusion == "failure"
    found = verdict([from_commit_status("ci/jenkins", "success", "https://j")],
                    CiRequirement(protected=("ci/jenkins",)))
    assert found.state is CiState.PASSED


def test_pending_past_the_timeout_times_out_naming_the_late_checks() -> None:
    found = verdict([run("test", "in_progress", None), run("lint")], minutes=61)
    assert found.state is CiState.TIMED_OUT
    assert found.progress() == "CI timed out waiting for `test`"
    missing = verdict([], CiRequirement(configured=("build",)), minutes=61)
    assert missing.state is CiState.TIMED_OUT and missing.missing == ("build",)


def test_a_repository_without_ci_passes_after_the_grace() -> None:
    assert verdict([], minutes=1).state is CiState.PENDING
    assert verdict([], minutes=1).progress() == "waiting for CI: no check has started yet"
    after = verdict([], minutes=6)
    assert after.state is CiState.PASSED
    assert after.progress() == "CI: no checks reported on this commit"


def test_a_repository_shows_ci_by_its_workflows_its_checks_or_its_base() -> None:
    plain = CiRequirement(own_app_id=OWN_APP_ID)
    seen = [CheckObservation("build", "queued", app_slug="circleci", app_id=77)]
    own = [CheckObservation("Stepwise / batch 1", "completed", "success", app_slug="stepwise",
                            app_id=OWN_APP_ID)]
    assert not expects_ci(plain, on_commit=(), on_base=(), workflow_files=())
    assert not expects_ci(plain, on_commit=own, on_base=own, workflow_files=["README.md"])
    assert expects_ci(plain, on_commit=(), on_base=(), workflow_files=["ci.yml"])
    assert expects_ci(plain, on_commit=seen, on_base=(), workflow_files=())
    assert expects_ci(plain, on_commit=(), on_base=seen, workflow_files=())
    assert expects_ci(CiRequirement(configured=("build",)), on_commit=(), on_base=(),
                      workflow_files=())
    assert expects_ci(CiRequirement(protected=("build",)), on_commit=(), on_base=(),
                      workflow_files=())
