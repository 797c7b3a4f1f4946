"""The repository's CI through the GitHub adapter (bot/github/ci.py) and the forge's CI methods,
with the real githubkit client against the loopback fake GitHub playing the repository's CI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.github.app import GitHubApp
from bot.github.ci import LOG_TAIL_LINES, RepositoryCi
from bot.github.client import Installation
from bot.github.errors import ForgeError
from bot.github.forge import GitHubForge
from jobs.basics.errors import RetryClass
from jobs.decisions.ci import CheckObservation
from jobs.kernel import outbox
from jobs.kernel.job import Job
from jobs.notes.annotations import Annotation
from jobs.notes.check_runs import CheckRunDraft, JobCheckState, batch_check, job_check
from tests.kit.github import FakeGitHub
from tests.kit.github_ci import OTHER_CI, CiPlayer
from tests.kit.github_injection import HANG_UP
from tests.kit.records import make_job

OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(root=tmp_path / "gh") as fake:
        fake.add_repo(OWNER, NAME, {"calc/a.py": "x = 1\n", "calc/b.py": "y = 2\n"})
        yield fake


@pytest.fixture
def client(gh: FakeGitHub) -> Installation:
    return GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                     timeout=10).client(1)


@pytest.fixture
def ci(gh: FakeGitHub) -> CiPlayer:
    return CiPlayer(gh, gh.repos[REPO])


@pytest.fixture
def sha(gh: FakeGitHub) -> str:
    head = gh.branch_head(REPO, "main")
    assert head is not None
    return head


@pytest.fixture
def job() -> Job:
    job = make_job()
    job.repo = REPO
    return job


def test_ci_report_reads_every_check_and_status_and_what_the_base_requires(
        client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    for index in range(120):  # more than one page of check runs
        ci.report(sha, f"shard-{index}", "success")
    ci.app_check(sha, "coverage", None, app=OTHER_CI)
    ci.status(sha, "ci/lint", "pending")
    ci.status(sha, "ci/lint", "failure", target_url="https://ci.example/lint/1")
    ci.protect("main", ["shard-0", "ci/lint"], strict=True)
    ci.ruleset("main", ["coverage", "shard-0"])
    report = GitHubForge(client, REPO).ci_report(job, sha)
    assert report is not None
    by_name = {check.name: check for check in report.observed}
    assert len(by_name) == 122
    assert by_name["shard-7"].passed and by_name["shard-7"].app_slug == "github-actions"
    assert by_name["shard-7"].run_id > 0 and by_name["shard-7"].url
    assert (by_name["coverage"].status, by_name["coverage"].app_slug) == ("in_progress", "circle-ci")
    lint = by_name["ci/lint"]
    assert (lint.done, lint.passed, lint.url) == (True, False, "https://ci.example/lint/1")
    assert report.protected == ("shard-0", "ci/lint", "coverage") and report.strict


def test_a_protection_requiring_stepwise_s_own_check_is_not_waited_for(
        client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    ci.protect("main", ["Stepwise", "tests"])
    ci.ruleset("main", ["Stepwise / batch 1"])
    report = GitHubForge(client, REPO).ci_report(job, sha)
    assert report is not None and report.protected == ("tests",)


def test_a_base_branch_that_is_not_protected_requires_nothing(client: Installation, sha: str,
                                                              job: Job) -> None:
    report = GitHubForge(client, REPO).ci_report(job, sha)
    assert report is not None and report.protected == () and report.observed == ()
    job.base_branch = "gone"
    assert RepositoryCi(client, REPO).required("gone").names == ()


def test_ci_failures_carry_annotations_and_the_actions_log_tail_redacted(
        client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    secret = "ghp_" + "A" * 36
    log = "".join(f"2026-12-01T12:00:00.1234567Z line {n}\n" for n in range(300))
    log += f"2026-12-01T12:00:01.0000000Z token={secret}\n##[error]Process completed with exit code 1.\n"
    tests = ci.report(sha, "tests", "failure", annotations=[("calc/a.py", 3, "assert 1 == 2")], log=log)
    other = ci.app_check(sha, "coverage", "failure", app=OTHER_CI)
    ci.status(sha, "ci/lint", "error")
    failing = [CheckObservation("tests", "completed", "failure", app_slug="github-actions",
                                run_id=tests.run.id),
               CheckObservation("coverage", "completed", "failure", app_slug="circle-ci",
                                run_id=other.run.id),
               CheckObservation("ci/lint", "completed", "failure")]
    failures = GitHubForge(client, REPO).ci_failures(job, sha, failing)
    assert [f.check for f in failures] == ["tests", "coverage", "ci/lint"]
    first = failures[0]
    assert [(a.path, a.line, a.message) for a in first.annotations] == [("calc/a.py", 3, "assert 1 == 2")]
    lines = first.log_tail.splitlines()
    assert len(lines) == LOG_TAIL_LINES and lines[-1] == "##[error]Process completed with exit code 1."
    assert lines[0] == "line 202" and "2026-12-01T" not in first.log_tail  # Actions' stamps cut
    assert secret not in first.log_tail
    assert failures[1].log_tail == "" and failures[2].annotations == ()


def test_a_detail_github_cannot_give_leaves_the_failure_without_it(
        gh: FakeGitHub, client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    tests = ci.report(sha, "tests", "failure", log="boom\n")
    gh.fail("GET", r"/annotations$", 502, times=10)
    failing = [CheckObservation("tests", "completed", "failure", app_slug="github-actions",
                                run_id=tests.run.id)]
    (failure,) = GitHubForge(client, REPO).ci_failures(job, sha, failing)
    assert (failure.check, failure.annotations, failure.log_tail) == ("tests", (), "")


def test_reading_checks_without_the_permission_is_an_error_naming_it(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    gh.installations[1].permissions = {"contents": "write", "metadata": "read"}
    with pytest.raises(ForgeError) as refused:
        GitHubForge(client, REPO).ci_report(job, sha)
    assert refused.value.code == "github_403" and refused.value.retry_class is RetryClass.DO_NOT_RETRY
    assert "permissions" in refused.value.hint


def test_a_fault_reading_checks_is_retryable(gh: FakeGitHub, client: Installation, sha: str,
                                             job: Job) -> None:
    gh.fail("GET", r"/check-runs$", 502)
    with pytest.raises(ForgeError) as fault:
        GitHubForge(client, REPO).ci_report(job, sha)
    assert fault.value.retry_class is RetryClass.AUTO_RETRY


def test_rerun_asks_actions_for_the_failed_jobs_once_per_run_and_says_what_it_cannot(
        gh: FakeGitHub, client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    gh.installations[1].permissions = {**gh.installations[1].permissions, "actions": "write"}
    unit = ci.report(sha, "unit", "failure")
    lint = ci.report(sha, "lint", "failure")
    other = ci.app_check(sha, "coverage", "failure", app=OTHER_CI)
    checks = [CheckObservation(p.run.name, "completed", "failure", app_slug=p.run.app.slug,
                               run_id=p.run.id, url=f"https://ci.example/{p.run.id}")
              for p in (unit, lint, other)]
    checks.append(CheckObservation("ci/lint", "completed", "failure", "https://ci.example/s"))
    refused = GitHubForge(client, REPO).rerun_checks(job, sha, checks)
    assert len(gh.requests_to("POST", r"/rerun-failed-jobs$")) == 1
    assert not gh.requests_to("POST", r"/rerequest$")  # GitHub refuses another app's suite
    assert [e for e in gh.effects if "rerun" in e or "rerequested" in e] == [
        f"{REPO}@{sha[:7]}:workflow-rerun-failed:CI"]
    assert sorted(p.run.name for p in ci.rerun_requested("success")) == ["lint", "unit"]
    assert [r.check.name for r in refused] == ["coverage", "ci/lint"]
    assert "only its own app can re-run it" in refused[0].instead
    assert f"https://ci.example/{other.run.id}" in refused[0].instead
    assert "commit status" in refused[1].instead


def test_without_actions_write_retry_says_what_to_press_and_nothing_pretends_to_rerun(
        gh: FakeGitHub, client: Installation, ci: CiPlayer, sha: str, job: Job) -> None:
    gh.installations[1].permissions = {**gh.installations[1].permissions, "actions": "read"}
    unit = ci.report(sha, "unit", "failure")
    check = CheckObservation("unit", "completed", "failure", app_slug="github-actions",
                             run_id=unit.run.id)
    [refused] = GitHubForge(client, REPO).rerun_checks(job, sha, [check])
    assert [r.status for r in gh.requests_to("POST", r"/rerun-failed-jobs$")] == [403]
    assert not gh.requests_to("POST", r"/rerequest$")
    assert ci.rerun_requested("success") == []
    assert refused.check == check and "**Re-run failed jobs**" in refused.instead
    assert "`actions: write`" in refused.instead
    assert refused.instead.endswith(f"/actions/runs/{unit.workflow.id}")  # type: ignore[union-attr]


def _draft(job: Job, sha: str, state: JobCheckState = JobCheckState.WORKING) -> CheckRunDraft:
    return job_check(job_id=job.id, head_sha=sha, state=state, headline="Stepwise is working",
                     command="/stepwise approve" if state is JobCheckState.AT_GATE else "")


def test_publishing_a_check_run_twice_makes_one_run_updated_in_place(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    forge = GitHubForge(client, REPO)
    forge.publish_check_run(job, _draft(job, sha))
    forge.publish_check_run(job, _draft(job, sha, JobCheckState.AT_GATE))
    runs = gh.repos[REPO].ci.runs_on(sha)
    assert len(runs) == 1 and runs[0].external_id == f"{job.id}:job"
    assert (runs[0].status, runs[0].conclusion) == ("completed", "action_required")
    assert "/stepwise approve" in (runs[0].summary or "")
    assert job.outbox == []


def test_a_create_github_made_but_answered_502_is_found_again_not_made_twice(
        gh: FakeGitHub, sha: str, job: Job) -> None:
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                    timeout=10, sleep=lambda _s: None)
    gh.fail("POST", r"/check-runs$", 502, after=True)  # done, then 502
    app.retry = type(app.retry)(backoff_s=(0.0,))
    GitHubForge(app.client(1), REPO).publish_check_run(job, _draft(job, sha))
    assert len(gh.repos[REPO].ci.runs_on(sha)) == 1 and job.outbox == []


def test_a_502_leaves_the_run_owed_and_delivering_it_later_publishes_it_once(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    forge = GitHubForge(client, REPO)
    gh.fail("POST", r"/check-runs$", 502, times=5)
    forge.publish_check_run(job, _draft(job, sha))
    key = f"{outbox.CHECK_PREFIX}{job.id}:job"
    owed = outbox.entry(job, key)
    assert owed is not None and owed.tries == 1 and "github_transient" in owed.last_error
    assert gh.repos[REPO].ci.runs_on(sha) == []
    gh.failures.clear()
    assert forge.deliver_all(job) == 0  # what the reconciler does with the record alone
    assert forge.deliver_all(job) == 0
    (run,) = gh.repos[REPO].ci.runs_on(sha)
    assert (run.name, run.status) == ("Stepwise", "in_progress")


def test_a_run_made_but_its_answer_lost_with_the_connection_is_owed_and_published_once(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    """GitHub made the run and its front end dropped the connection before the answer ("done,
    then hung up": the client sees "server disconnected"): the run is owed, filed as a lost
    answer, and delivering it later finds the run by its external id instead of making another."""
    forge = GitHubForge(client, REPO)
    gh.fail("POST", r"/check-runs$", HANG_UP, after=True)
    forge.publish_check_run(job, _draft(job, sha))
    owed = outbox.entry(job, f"{outbox.CHECK_PREFIX}{job.id}:job")
    assert owed is not None and owed.tries == 1
    assert owed.last_error.startswith("github_unreachable: GitHub's answer was lost with its "
                                      "connection: RemoteProtocolError"), owed.last_error
    assert [r.status for r in gh.requests_to("POST", r"/check-runs$")] == [HANG_UP]
    assert forge.deliver_all(job) == 0
    (run,) = gh.repos[REPO].ci.runs_on(sha)
    assert (run.name, run.status) == ("Stepwise", "in_progress")
    assert len(gh.requests_to("POST", r"/check-runs$")) == 1  # found, not made again


def test_on_github_enterprise_server_the_same_calls_work(tmp_path: Path, job: Job) -> None:
    """GHES: the API under /api/v3 in version 2022-11-28 only, the log download outside it."""
    with FakeGitHub(root=tmp_path / "ghes", enterprise=True) as ghes:
        ghes.add_repo(OWNER, NAME, {"calc/a.py": "x = 1\n"})
        sha = ghes.branch_head(REPO, "main")
        assert sha is not None
        played = CiPlayer(ghes, ghes.repos[REPO]).report(sha, "tests", "failure", log="E boom\n")
        client = GitHubApp(app_id=ghes.app_id, private_key=ghes.private_key_pem,
                           base_url=ghes.base_url, timeout=10).client(1)
        forge = GitHubForge(client, REPO)
        report = forge.ci_report(job, sha)
        assert report is not None and [c.name for c in report.observed] == ["tests"]
        (failure,) = forge.ci_failures(job, sha, report.observed)
        assert failure.log_tail == "E boom" and played.job is not None
        # An unprotected branch: GitHub's 404 "Branch not protected", which requires nothing.
        assert [(r.path.rsplit("/", 2)[-2:], r.status) for r in ghes.requests if r.status >= 400
                ] == [(["protection", "required_status_checks"], 404)]


def test_the_job_run_left_in_progress_on_an_old_head_is_closed_as_superseded(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    forge = GitHubForge(client, REPO)
    forge.publish_check_run(job, _draft(job, sha))
    newer = gh.push_files(REPO, "main", {"calc/a.py": "x = 3\n"}, "batch 2")
    forge.publish_check_run(job, _draft(job, newer))
    forge.publish_check_run(job, _draft(job, newer))  # the same head again: nothing superseded
    (old,) = gh.repos[REPO].ci.runs_on(sha)
    (new,) = gh.repos[REPO].ci.runs_on(newer)
    assert (old.status, old.conclusion, old.title) == ("completed", "neutral",
                                                        f"Superseded by {newer[:7]}")
    assert (new.status, new.conclusion) == ("in_progress", None)
    assert len(gh.requests_to("PATCH", rf"/check-runs/{old.id}$")) == 1


def test_a_completed_run_is_never_updated_a_new_state_is_a_new_run(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    """GitHub keeps a completed run as it is (the fake answers 422 to an update): the job's run
    at a gate (`action_required`) is followed by a new run of the same name when work goes on,
    and a run asking at a gate on a head left behind is superseded by a newer `neutral` run."""
    forge = GitHubForge(client, REPO)
    forge.publish_check_run(job, _draft(job, sha, JobCheckState.AT_GATE))
    forge.publish_check_run(job, _draft(job, sha, JobCheckState.AT_GATE))  # repeated: nothing new
    forge.publish_check_run(job, _draft(job, sha))  # approved: working again on the same head
    runs = sorted(gh.repos[REPO].ci.runs_on(sha), key=lambda run: run.id)
    assert [(r.name, r.status, r.conclusion) for r in runs] == [
        ("Stepwise", "completed", "action_required"), ("Stepwise", "in_progress", None)]
    forge.publish_check_run(job, _draft(job, sha, JobCheckState.AT_GATE))  # the next gate
    assert [r.conclusion for r in sorted(gh.repos[REPO].ci.runs_on(sha), key=lambda r: r.id)] == [
        "action_required", "action_required"]
    newer = gh.push_files(REPO, "main", {"calc/a.py": "x = 3\n"}, "batch 2")
    forge.publish_check_run(job, _draft(job, newer))
    on_old = sorted(gh.repos[REPO].ci.runs_on(sha), key=lambda r: r.id)
    assert [r.conclusion for r in on_old] == ["action_required", "action_required", "neutral"]
    assert on_old[-1].title == f"Superseded by {newer[:7]}"
    assert not [r for r in gh.requests if r.status >= 400]
    assert job.outbox == []


def test_180_annotations_all_arrive_50_a_request_and_only_the_last_completes_the_run(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    """GitHub takes 50 annotations a request (the fake answers 422 past that) and never changes
    a completed run: the run is made in progress, the rest follow in updates, the last one
    completes it; publishing it again sends nothing twice."""
    notes = [Annotation("calc/a.py", n, f"E501 line {n} too long ü") for n in range(1, 181)]
    draft = batch_check(job_id=job.id, number=1, total=1, files=["calc/a.py"], head_sha=sha,
                        commands=[], annotations=notes)
    forge = GitHubForge(client, REPO)
    forge.publish_check_run(job, draft)
    (run,) = gh.repos[REPO].ci.runs_on(sha)
    assert [(a.start_line, a.message) for a in run.annotations] == [
        (n.line, n.message) for n in notes]
    assert (run.status, run.conclusion) == ("completed", "success") and job.outbox == []
    sent = [*gh.requests_to("POST", r"/check-runs$"), *gh.requests_to("PATCH", r"/check-runs/\d+$")]
    assert all(r.status < 300 for r in sent)
    sizes = [len(r.json["output"].get("annotations", [])) for r in sent]
    assert sizes == [50, 50, 50, 30] and max(sizes) <= 50
    assert [r.json.get("status") for r in sent] == ["in_progress"] * 3 + ["completed"]
    forge.publish_check_run(job, draft)  # a repeated publication: already shown, nothing sent
    assert len(gh.repos[REPO].ci.runs_on(sha)) == 1 and len(run.annotations) == 180
    assert len(gh.requests_to("PATCH", r"/check-runs/\d+$")) == 3


def test_annotations_cut_off_half_way_go_on_where_github_stopped(
        gh: FakeGitHub, client: Installation, sha: str, job: Job) -> None:
    notes = [Annotation("calc/b.py", n, f"line {n}") for n in range(1, 121)]
    draft = batch_check(job_id=job.id, number=2, total=2, files=["calc/b.py"], head_sha=sha,
                        commands=[], annotations=notes)
    forge = GitHubForge(client, REPO)
    gh.fail("PATCH", r"/check-runs/\d+$", 502, times=5)  # the second chunk does not get through
    forge.publish_check_run(job, draft)
    (run,) = gh.repos[REPO].ci.runs_on(sha)
    assert run.status == "in_progress" and len(run.annotations) == 50
    assert outbox.entry(job, f"{outbox.CHECK_PREFIX}{job.id}:batch:2") is not None  # still owed
    gh.failures.clear()
    assert forge.deliver_all(job) == 0  # the reconciler: from annotations_count on
    assert [a.start_line for a in run.annotations] == list(range(1, 121))
    assert (run.status, run.conclusion) == ("completed", "success")
