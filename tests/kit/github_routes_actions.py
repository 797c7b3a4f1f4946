"""REST endpoints of the fake GitHub for GitHub Actions: workflow runs (list by `head_sha`, get),
their jobs (list, get), a job's log (a 302 to a short-lived download URL the fake serves, as
GitHub does) and re-running a run's failed jobs. Reads need `actions: read`, the re-run
`actions: write`."""

from __future__ import annotations

import hashlib
import hmac
import time

from tests.kit import github_ci_render as shapes
from tests.kit.github_api import REPO, ApiError, Call, Reply, route
from tests.kit.github_ci_model import WorkflowJob, WorkflowRun
from tests.kit.github_routes_checks import paged

ACTIONS_READ = "actions=read"
ACTIONS_WRITE = "actions=write"
LOG_PATH = "/_fake/actions-logs"  # where the redirect points (GitHub: a signed blob storage URL)
LOG_URL_TTL_S = 60  # GitHub's download links expire after a minute


def workflow_run_of(call: Call) -> WorkflowRun:
    run = call.r.ci.workflow_runs.get(int(call.params["run_id"]))
    if run is None:
        raise ApiError(404, "Not Found")
    return run


def job_of(call: Call) -> WorkflowJob:
    job = call.r.ci.jobs.get(int(call.params["job_id"]))
    if job is None:
        raise ApiError(404, "Not Found")
    return job


@route("GET", REPO + r"/actions/runs", permissions=ACTIONS_READ)
def list_workflow_runs(call: Call) -> Reply:
    runs = sorted(call.r.ci.workflow_runs.values(), key=lambda r: -r.id)
    for key in ("head_sha", "status", "branch"):
        if wanted := call.query.get(key):
            field = "head_branch" if key == "branch" else key
            runs = [r for r in runs if wanted in (getattr(r, field), r.conclusion)]
    items = [shapes.workflow_run(call.render, call.r, r) for r in runs]
    return paged(call, items, f"/repositories/{call.r.id}/actions/runs", "workflow_runs")


@route("GET", REPO + r"/actions/runs/(?P<run_id>\d+)", permissions=ACTIONS_READ)
def get_workflow_run(call: Call) -> Reply:
    return Reply(200, shapes.workflow_run(call.render, call.r, workflow_run_of(call)))


@route("GET", REPO + r"/actions/runs/(?P<run_id>\d+)/jobs", permissions=ACTIONS_READ)
def list_jobs(call: Call) -> Reply:
    run = workflow_run_of(call)
    jobs = [call.r.ci.jobs[i] for i in run.jobs]
    if call.query.get("filter", "latest") == "latest":
        jobs = [j for j in jobs if j.run_attempt == run.run_attempt]
    items = [shapes.workflow_job(call.render, call.r, j) for j in jobs]
    return paged(call, items, f"/repositories/{call.r.id}/actions/runs/{run.id}/jobs", "jobs")


@route("GET", REPO + r"/actions/jobs/(?P<job_id>\d+)", permissions=ACTIONS_READ)
def get_job(call: Call) -> Reply:
    return Reply(200, shapes.workflow_job(call.render, call.r, job_of(call)))


def log_signature(secret: str, job_id: int, expires: int) -> str:
    return hmac.new(secret.encode(), f"{job_id}:{expires}".encode(), hashlib.sha256).hexdigest()


@route("GET", REPO + r"/actions/jobs/(?P<job_id>\d+)/logs", permissions=ACTIONS_READ)
def download_job_logs(call: Call) -> Reply:
    job = job_of(call)
    if job.status != "completed":
        raise ApiError(404, "Not Found")  # GitHub has no log file before the job ends
    expires = int(time.time()) + LOG_URL_TTL_S
    signature = log_signature(str(call.state.app_id), job.id, expires)
    location = f"{call.render.web}{LOG_PATH}/{call.r.id}/{job.id}?expires={expires}&sig={signature}"
    return Reply(302, b"", {"Location": location})


@route("GET", r"(?:/-)?" + LOG_PATH + r"/(?P<repo_id>\d+)/(?P<job_id>\d+)", auth="public",
       permissions="")
def serve_job_log(call: Call) -> Reply:
    """The download URL: no token, a signature that expires (a stale link is 403, like Azure's)."""
    repo = next((r for r in call.state.repos.values() if r.id == int(call.params["repo_id"])), None)
    job = repo.ci.jobs.get(int(call.params["job_id"])) if repo is not None else None
    expires = int(call.query.get("expires", "0") or 0)
    good = log_signature(str(call.state.app_id), int(call.params["job_id"]), expires)
    if job is None or not hmac.compare_digest(good, call.query.get("sig", "")) or expires < time.time():
        return Reply(403, b"AuthenticationFailed", {"Content-Type": "text/plain"})
    return Reply(200, job.log.encode(), {"Content-Type": "text/plain"})


@route("POST", REPO + r"/actions/runs/(?P<run_id>\d+)/rerun-failed-jobs", permissions=ACTIONS_WRITE)
def rerun_failed_jobs(call: Call) -> Reply:
    run = workflow_run_of(call)
    if run.status != "completed":
        raise ApiError(403, "This workflow is already running")
    call.state.effect(f"{call.r.full_name}@{run.head_sha[:7]}:workflow-rerun-failed:{run.name}")
    run.rerun_requested = True
    return Reply(201, {})
