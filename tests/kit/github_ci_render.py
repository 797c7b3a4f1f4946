"""JSON shapes of the fake GitHub's CI objects (check suites and runs, annotations, commit statuses,
workflow runs and jobs), as the REST API and the webhooks carry them."""

from __future__ import annotations

from typing import Any

from tests.kit.github_ci_model import (
    AppRef,
    CheckAnnotation,
    CheckRun,
    CheckSuite,
    CommitStatus,
    WorkflowJob,
    WorkflowRun,
)
from tests.kit.github_model import FakeRepo
from tests.kit.github_render import Renderer, ts

JSON = dict[str, Any]


def app(render: Renderer, ref: AppRef) -> JSON:
    owner = render.user(ref.slug if ref.slug != "github-actions" else "github", "Organization")
    return {"id": ref.id, "slug": ref.slug, "node_id": f"A_fake{ref.id}", "client_id": f"Iv1.{ref.slug}",
            "owner": owner, "name": ref.name, "description": None,
            "external_url": f"{render.web}/apps/{ref.slug}", "html_url": f"{render.web}/apps/{ref.slug}",
            "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
            "permissions": {"checks": "write", "metadata": "read"}, "events": []}


def check_suite(render: Renderer, repo: FakeRepo, suite: CheckSuite) -> JSON:
    url = f"{render.api}/repos/{repo.full_name}/check-suites/{suite.id}"
    runs = [r for r in repo.ci.runs.values() if r.suite_id == suite.id]
    return {
        "id": suite.id, "node_id": f"CS_fake{suite.id}", "head_branch": suite.head_branch,
        "head_sha": suite.head_sha, "status": suite.status, "conclusion": suite.conclusion, "url": url,
        "before": None, "after": suite.head_sha, "pull_requests": [], "app": app(render, suite.app),
        "repository": render.repository(repo), "created_at": ts(suite.created_at),
        "updated_at": ts(suite.updated_at), "head_commit": head_commit(repo, suite.head_sha),
        "latest_check_runs_count": len(runs), "check_runs_url": url + "/check-runs",
        "rerequestable": True, "runs_rerequestable": True,
    }


def head_commit(repo: FakeRepo, sha: str) -> JSON:
    who = {"name": "Stepwise", "email": "stepwise@example.invalid"}
    return {"id": sha, "tree_id": sha, "message": "commit", "timestamp": "2020-01-01T00:00:00Z",
            "author": who, "committer": who}


def check_run(render: Renderer, repo: FakeRepo, run: CheckRun) -> JSON:
    url = f"{render.api}/repos/{repo.full_name}/check-runs/{run.id}"
    suite = repo.ci.suites[run.suite_id]
    return {
        "id": run.id, "node_id": f"CR_fake{run.id}", "head_sha": run.head_sha,
        "external_id": run.external_id, "url": url,
        "html_url": f"{render.web}/{repo.full_name}/runs/{run.id}",
        "details_url": run.details_url, "status": run.status, "conclusion": run.conclusion,
        "started_at": ts(run.started_at), "completed_at": ts(run.completed_at),
        "output": {"title": run.title, "summary": run.summary, "text": run.text,
                   "annotations_count": len(run.annotations), "annotations_url": url + "/annotations"},
        "name": run.name,
        "check_suite": {"id": suite.id, "node_id": f"CS_fake{suite.id}", "head_branch": suite.head_branch,
                        "head_sha": suite.head_sha, "status": suite.status, "conclusion": suite.conclusion,
                        "url": f"{render.api}/repos/{repo.full_name}/check-suites/{suite.id}",
                        "before": None, "after": suite.head_sha, "pull_requests": [],
                        "app": app(render, suite.app), "created_at": ts(suite.created_at),
                        "updated_at": ts(suite.updated_at)},
        "app": app(render, run.app), "pull_requests": [],
    }


def annotation(render: Renderer, repo: FakeRepo, item: CheckAnnotation) -> JSON:
    return {"path": item.path, "start_line": item.start_line, "end_line": item.end_line,
            "start_column": None, "end_column": None, "annotation_level": item.annotation_level,
            "title": item.title, "message": item.message, "raw_details": item.raw_details,
            "blob_href": f"{render.web}/{repo.full_name}/blob/HEAD/{item.path}"}


def commit_status(render: Renderer, repo: FakeRepo, status: CommitStatus) -> JSON:
    return {"url": f"{render.api}/repos/{repo.full_name}/statuses/{status.sha}", "avatar_url": None,
            "id": status.id, "node_id": f"SC_fake{status.id}", "state": status.state,
            "description": status.description, "target_url": status.target_url,
            "context": status.context, "created_at": ts(status.created_at),
            "updated_at": ts(status.created_at), "creator": render.user(status.creator)}


def workflow_run(render: Renderer, repo: FakeRepo, run: WorkflowRun) -> JSON:
    url = f"{render.api}/repos/{repo.full_name}/actions/runs/{run.id}"
    return {
        "id": run.id, "name": run.name, "node_id": f"WFR_fake{run.id}", "head_branch": run.head_branch,
        "head_sha": run.head_sha, "path": run.path, "display_title": run.name, "run_number": run.run_number,
        "event": "push", "status": run.status, "conclusion": run.conclusion,
        "workflow_id": 161335, "check_suite_id": run.suite_id,
        "check_suite_node_id": f"CS_fake{run.suite_id}",
        "url": url, "html_url": f"{render.web}/{repo.full_name}/actions/runs/{run.id}",
        "pull_requests": [], "created_at": ts(run.created_at), "updated_at": ts(run.updated_at),
        "run_attempt": run.run_attempt, "run_started_at": ts(run.created_at),
        "jobs_url": url + "/jobs", "logs_url": url + "/logs",
        "check_suite_url": f"{render.api}/repos/{repo.full_name}/check-suites/{run.suite_id}",
        "artifacts_url": url + "/artifacts", "cancel_url": url + "/cancel", "rerun_url": url + "/rerun",
        "previous_attempt_url": f"{url}/attempts/{run.run_attempt - 1}" if run.run_attempt > 1 else None,
        "workflow_url": f"{render.api}/repos/{repo.full_name}/actions/workflows/161335",
        "head_commit": {**head_commit(repo, run.head_sha)},
        "repository": render.repository(repo), "head_repository": render.repository(repo),
        "actor": render.user("alice"), "triggering_actor": render.user("alice"),
        "referenced_workflows": [],
    }


def workflow_job(render: Renderer, repo: FakeRepo, job: WorkflowJob) -> JSON:
    run = repo.ci.workflow_runs[job.run_id]
    url = f"{render.api}/repos/{repo.full_name}/actions/jobs/{job.id}"
    return {
        "id": job.id, "run_id": job.run_id, "workflow_name": run.name, "head_branch": run.head_branch,
        "run_url": f"{render.api}/repos/{repo.full_name}/actions/runs/{job.run_id}",
        "run_attempt": job.run_attempt, "node_id": f"CR_fake{job.id}", "head_sha": job.head_sha, "url": url,
        "html_url": f"{render.web}/{repo.full_name}/actions/runs/{job.run_id}/job/{job.id}",
        "status": job.status, "conclusion": job.conclusion, "created_at": ts(job.started_at),
        "started_at": ts(job.started_at), "completed_at": ts(job.completed_at), "name": job.name,
        "steps": [], "check_run_url": f"{render.api}/repos/{repo.full_name}/check-runs/{job.id}",
        "labels": ["ubuntu-latest"], "runner_id": 1, "runner_name": "GitHub Actions 1",
        "runner_group_id": 1, "runner_group_name": "GitHub Actions",
    }
