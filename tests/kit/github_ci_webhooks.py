"""CI webhook payloads (check_run, check_suite, status, workflow_run) built from the recorded shapes in
payloads/ (taken from @octokit/webhooks-examples) with the values of the fake GitHub's records:
every key the recording has is kept, its value is the fake's."""

from __future__ import annotations

from typing import Any

from tests.kit import github_ci_render as shapes
from tests.kit.github_ci_model import AppRef, CheckRun, CheckSuite, CommitStatus, WorkflowRun
from tests.kit.github_model import FakeRepo
from tests.kit.github_render import Renderer
from tests.kit.webhooks import make_event, user

JSON = dict[str, Any]


def _fill(recorded: JSON, values: JSON) -> JSON:
    """`recorded` with the values of `values` for the keys both have (nested objects too)."""
    filled = dict(recorded)
    for key, old in recorded.items():
        if key not in values:
            continue
        new = values[key]
        filled[key] = _fill(old, new) if isinstance(old, dict) and isinstance(new, dict) else new
    return filled


def _app(recorded: JSON, app: AppRef) -> JSON:
    return {**recorded, "id": app.id, "slug": app.slug, "name": app.name, "node_id": f"A_fake{app.id}"}


def _base(name: str, repo: FakeRepo, installation_id: int, sender: str) -> JSON:
    return make_event(name, repo=repo, installation_id=installation_id, sender=sender,
                      sender_type="Bot" if sender.endswith("[bot]") else "User")


def check_run_event(render: Renderer, repo: FakeRepo, run: CheckRun, action: str, *,
                    installation_id: int, sender: str) -> JSON:
    payload = _base("check_run.completed", repo, installation_id, sender)
    recorded = payload["check_run"]
    rendered = shapes.check_run(render, repo, run)
    body = _fill(recorded, rendered)
    body["app"] = _app(recorded["app"], run.app)
    body["check_suite"]["app"] = _app(recorded["check_suite"]["app"], repo.ci.suites[run.suite_id].app)
    body["check_suite"]["pull_requests"] = body["pull_requests"] = []
    payload.update(action=action, check_run=body)
    return payload


def check_suite_event(render: Renderer, repo: FakeRepo, suite: CheckSuite, action: str, *,
                      installation_id: int, sender: str) -> JSON:
    payload = _base("check_suite.completed", repo, installation_id, sender)
    recorded = payload["check_suite"]
    body = _fill(recorded, shapes.check_suite(render, repo, suite))
    body["app"] = _app(recorded["app"], suite.app)
    body["pull_requests"] = []
    body["head_commit"] = {**recorded["head_commit"], "id": suite.head_sha, "tree_id": suite.head_sha}
    payload.update(action=action, check_suite=body)
    return payload


def status_event(render: Renderer, repo: FakeRepo, status: CommitStatus, *, installation_id: int,
                 sender: str) -> JSON:
    payload = _base("status", repo, installation_id, sender)
    payload.update(id=status.id, sha=status.sha, name=repo.full_name, target_url=status.target_url,
                   context=status.context, description=status.description, state=status.state,
                   created_at=shapes.commit_status(render, repo, status)["created_at"],
                   updated_at=shapes.commit_status(render, repo, status)["updated_at"],
                   branches=[])
    payload["commit"] = {**payload["commit"], "sha": status.sha}
    return payload


def workflow_run_event(render: Renderer, repo: FakeRepo, run: WorkflowRun, action: str, *,
                       installation_id: int, sender: str) -> JSON:
    payload = _base("workflow_run.completed", repo, installation_id, sender)
    recorded = payload["workflow_run"]
    body = _fill(recorded, shapes.workflow_run(render, repo, run))
    body["actor"] = body["triggering_actor"] = user(sender)
    body["head_commit"] = {**recorded["head_commit"], "id": run.head_sha, "tree_id": run.head_sha}
    body["repository"], body["head_repository"] = recorded["repository"], recorded["head_repository"]
    body["pull_requests"] = []
    body["display_title"] = run.name  # the `requested` and `in_progress` shapes require it
    payload.update(action=action, workflow_run=body)
    payload["workflow"] = {**payload["workflow"], "name": run.name, "path": run.path}
    return payload
