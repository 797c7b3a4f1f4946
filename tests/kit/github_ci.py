"""The tests' stand-in for a repository's CI: reports checks on pushed commits through the fake
GitHub's records, as GitHub Actions (or another CI app, or a commit status) would, and sends the
matching signed webhooks to the App.

    ci = CiPlayer(gh, repo, deliver_to=app_url, secret=SECRET)
    job = ci.actions_job(sha, "tests")              # queued: workflow_run + check_run webhooks
    ci.start(job)                                   # in_progress
    ci.finish(job, "failure", annotations=[("calc/a.py", 3, "assert 1 == 2")], log="...")
    ci.status(sha, "ci/lint", "success")            # a commit status and its `status` webhook
    ci.rerun_requested()                            # plays what the App asked to re-run

Pass `webhooks=False` to any call to change GitHub's records without telling the App (a missed
delivery).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.kit import github_ci_webhooks as hooks
from tests.kit.github import FakeGitHub
from tests.kit.github_ci_model import (
    AppRef,
    CheckAnnotation,
    CheckRun,
    RequiredChecks,
    Ruleset,
    WorkflowJob,
    WorkflowRun,
)
from tests.kit.github_ci_ops import ACTIONS, add_status, new_run, refresh_suite, suite_for
from tests.kit.github_model import DEFAULT_INSTALLATION_ID, FakeRepo
from tests.kit.webhooks import deliver

OTHER_CI = AppRef(9_001, "circle-ci", "CircleCI Checks")


@dataclass
class PlayedCheck:
    """One check as the player reported it: the check run, and for Actions its job and run."""

    run: CheckRun
    job: WorkflowJob | None = None
    workflow: WorkflowRun | None = None


@dataclass
class CiPlayer:
    gh: FakeGitHub
    repo: FakeRepo
    deliver_to: httpx.Client | str | None = None
    secret: str = ""
    installation_id: int = DEFAULT_INSTALLATION_ID
    sender: str = "alice"
    delivered: list[tuple[str, int]] = field(default_factory=list)  # (event, HTTP status)

    # -- what the base branch requires --------------------------------------------------------
    def protect(self, branch: str, contexts: Sequence[str], *, strict: bool = False,
                app_ids: dict[str, int] | None = None) -> None:
        """Branch protection requiring `contexts`; `app_ids` pins some to the App they must
        come from (GitHub's `checks[].app_id`)."""
        with self.gh.lock:
            self.repo.ci.protection[branch] = RequiredChecks(list(contexts), strict,
                                                             dict(app_ids or {}))

    def ruleset(self, branch: str, contexts: Sequence[str], *, strict: bool = False) -> Ruleset:
        with self.gh.lock:
            ruleset = Ruleset(len(self.repo.ci.rulesets) + 1, f"rules-{branch}", [branch],
                              list(contexts), strict)
            self.repo.ci.rulesets.append(ruleset)
            return ruleset

    # -- GitHub Actions -------------------------------------------------------------------------
    def actions_job(self, sha: str, name: str, *, workflow: str = "CI",
                    webhooks: bool = True) -> PlayedCheck:
        """A queued job `name` of workflow `workflow` on `sha` (one workflow run per workflow,
        sha and attempt); its check run has the job's id."""
        with self.gh.lock:
            state, ci = self.gh, self.repo.ci
            suite = suite_for(state, self.repo, sha, ACTIONS)
            run = next((w for w in ci.workflow_runs.values()
                        if w.head_sha == sha and w.name == workflow), None)
            new_workflow = run is None
            if run is None:
                now = state.clock()
                run = WorkflowRun(state.next_id("workflow_run"), workflow, sha, suite.head_branch or "",
                                  suite.id, now, now, run_number=len(ci.workflow_runs) + 1)
                ci.workflow_runs[run.id] = run
            run.status, run.conclusion = "queued", None
            check = new_run(state, self.repo, app=ACTIONS, name=name, head_sha=sha,
                            data={"details_url": f"{state.web_url}/{self.repo.full_name}/actions/runs/"
                                                 f"{run.id}"})
            job = WorkflowJob(check.id, run.id, name, sha, check.started_at, run_attempt=run.run_attempt)
            ci.jobs[job.id] = job
            run.jobs.append(job.id)
        if webhooks and new_workflow:
            self._send("workflow_run", hooks.workflow_run_event(self.gh.render, self.repo, run,
                                                                "requested", **self._who()))
        if webhooks:
            self._send("check_run", hooks.check_run_event(self.gh.render, self.repo, check, "created",
                                                          **self._who()))
        return PlayedCheck(check, job, run)

    def start(self, played: PlayedCheck, *, webhooks: bool = True) -> None:
        """The check runs (GitHub has no check_run action for that: a workflow run that starts
        says `workflow_run.in_progress`)."""
        with self.gh.lock:
            played.run.status = "in_progress"
            if played.job is not None:
                played.job.status = "in_progress"
            workflow = played.workflow
            starts = workflow is not None and workflow.status == "queued"
            if workflow is not None:
                workflow.status = "in_progress"
            refresh_suite(self.gh, self.repo, self.repo.ci.suites[played.run.suite_id])
        if webhooks and workflow is not None and starts:
            self._send("workflow_run", hooks.workflow_run_event(self.gh.render, self.repo, workflow,
                                                                "in_progress", **self._who()))

    def finish(self, played: PlayedCheck, conclusion: str, *,
               annotations: Sequence[tuple[str, int, str]] = (), log: str = "",
               webhooks: bool = True) -> None:
        """Complete the check; with the last job of its workflow run, the run and the suite too
        (check_run, then workflow_run and check_suite `completed`, as GitHub sends them)."""
        with self.gh.lock:
            now = self.gh.clock()
            run = played.run
            run.status, run.conclusion, run.completed_at = "completed", conclusion, now
            run.title = f"{run.name}: {conclusion}"
            run.summary = f"{len(annotations)} annotations" if annotations else conclusion
            level = "failure" if conclusion != "success" else "warning"
            run.annotations += [CheckAnnotation(path, line, line, level, message, title=run.name)
                                for path, line, message in annotations]
            if played.job is not None:
                played.job.status, played.job.conclusion, played.job.completed_at = \
                    "completed", conclusion, now
                played.job.log = log
            suite = self.repo.ci.suites[run.suite_id]
            refresh_suite(self.gh, self.repo, suite)
            workflow = played.workflow
            workflow_done = workflow is not None and all(
                self.repo.ci.jobs[j].status == "completed" for j in workflow.jobs
                if self.repo.ci.jobs[j].run_attempt == workflow.run_attempt)
            if workflow is not None and workflow_done:
                latest = [self.repo.ci.jobs[j] for j in workflow.jobs
                          if self.repo.ci.jobs[j].run_attempt == workflow.run_attempt]
                workflow.status = "completed"
                workflow.conclusion = "failure" if any(j.conclusion != "success" for j in latest) \
                    else "success"
                workflow.updated_at = now
        if not webhooks:
            return
        self._send("check_run", hooks.check_run_event(self.gh.render, self.repo, run, "completed",
                                                      **self._who()))
        if workflow is not None and workflow_done:
            self._send("workflow_run", hooks.workflow_run_event(self.gh.render, self.repo, workflow,
                                                                "completed", **self._who()))
        if suite.status == "completed":
            self._send("check_suite", hooks.check_suite_event(self.gh.render, self.repo, suite,
                                                              "completed", **self._who()))

    def report(self, sha: str, name: str, conclusion: str, *,
               annotations: Sequence[tuple[str, int, str]] = (), log: str = "",
               workflow: str = "CI", webhooks: bool = True) -> PlayedCheck:
        """An Actions job on `sha` going queued -> in_progress -> completed."""
        played = self.actions_job(sha, name, workflow=workflow, webhooks=webhooks)
        self.start(played, webhooks=webhooks)
        self.finish(played, conclusion, annotations=annotations, log=log, webhooks=webhooks)
        return played

    def rerun_requested(self, conclusion: str = "success", *, log: str = "",
                        webhooks: bool = True) -> list[PlayedCheck]:
        """Play the re-runs GitHub Actions really makes: a workflow run whose failed jobs were
        re-run (`rerun-failed-jobs`, which needs `actions: write`) gets a new attempt of its
        failed jobs, ending with `conclusion`. Nothing else re-runs Actions (another App cannot
        re-request an Actions suite), so nothing else is played."""
        played: list[PlayedCheck] = []
        with self.gh.lock:
            asked = [w for w in self.repo.ci.workflow_runs.values() if w.rerun_requested]
        for workflow in asked:
            with self.gh.lock:
                rerun_jobs = [self.repo.ci.jobs[j] for j in workflow.jobs
                              if self.repo.ci.jobs[j].run_attempt == workflow.run_attempt
                              and self.repo.ci.jobs[j].conclusion != "success"]
                workflow.rerun_requested = False
                workflow.run_attempt += 1
            for job in rerun_jobs:
                again = self.actions_job(workflow.head_sha, job.name, workflow=workflow.name,
                                         webhooks=webhooks)
                self.start(again, webhooks=webhooks)
                self.finish(again, conclusion, log=log, webhooks=webhooks)
                played.append(again)
        return played

    # -- other CI apps and commit statuses ------------------------------------------------------
    def app_check(self, sha: str, name: str, conclusion: str | None, *, app: AppRef = OTHER_CI,
                  webhooks: bool = True) -> PlayedCheck:
        """A check run of a CI app that is not Actions (no jobs, no logs); None: in progress."""
        data: dict[str, Any] = {"status": "in_progress"} if conclusion is None else \
            {"status": "completed", "conclusion": conclusion}
        with self.gh.lock:
            run = new_run(self.gh, self.repo, app=app, name=name, head_sha=sha, data=data)
        if webhooks:
            self._send("check_run", hooks.check_run_event(
                self.gh.render, self.repo, run, "completed" if conclusion else "created",
                **self._who()))
        return PlayedCheck(run)

    def status(self, sha: str, context: str, state: str, *, target_url: str | None = None,
               webhooks: bool = True) -> None:
        with self.gh.lock:
            status = add_status(self.gh, self.repo, sha, state_name=state, context=context,
                                creator=self.sender, target_url=target_url)
        if webhooks:
            self._send("status", hooks.status_event(self.gh.render, self.repo, status, **self._who()))

    # -- delivery -------------------------------------------------------------------------------
    def _who(self) -> dict[str, Any]:
        return {"installation_id": self.installation_id, "sender": self.sender}

    def _send(self, event: str, payload: dict[str, Any]) -> None:
        if self.deliver_to is None:
            return
        response = deliver(self.deliver_to, event, payload, secret=self.secret)
        self.delivered.append((event, response.status_code))
