"""Operations on the fake GitHub's CI records, shared by its routes (a token acting as Stepwise)
and the tests' CI player (acting as GitHub Actions or another CI app)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.kit import github_git
from tests.kit.github_api import CHECK_OUTPUT_MAX_BYTES, ApiError
from tests.kit.github_ci_model import (
    ACTIONS_APP_ID,
    ACTIONS_SLUG,
    MAX_ANNOTATIONS_PER_REQUEST,
    AppRef,
    CheckAnnotation,
    CheckRun,
    CheckSuite,
    CommitStatus,
)
from tests.kit.github_model import FakeRepo
from tests.kit.github_state import GitHubState

ACTIONS = AppRef(ACTIONS_APP_ID, ACTIONS_SLUG, "GitHub Actions")
RUN_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale",
               "timed_out")
STATUS_STATES = ("error", "failure", "pending", "success")
ANNOTATION_LEVELS = ("notice", "warning", "failure")


def own_app(state: GitHubState) -> AppRef:
    """The App the fake's installation tokens act as (Stepwise)."""
    return AppRef(state.app_id, state.app_slug, "Stepwise")


def resolve_sha(repo: FakeRepo, ref: str) -> str:
    """A commit sha, branch or tag of `repo` as a sha; GitHub's 422 when there is none."""
    sha = github_git.resolve(repo.path, ref) if ref else None
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    return sha


def suite_for(state: GitHubState, repo: FakeRepo, sha: str, app: AppRef) -> CheckSuite:
    """The app's check suite on `sha`, made on first use (GitHub makes one per app and commit)."""
    for suite in repo.ci.suites_on(sha):
        if suite.app.id == app.id:
            return suite
    now = state.clock()
    branch = next((b for b in github_git.branches(repo.path)
                   if github_git.branch_head(repo.path, b) == sha), None)
    suite = CheckSuite(state.next_id("check_suite"), sha, branch, app, now, now)
    repo.ci.suites[suite.id] = suite
    return suite


def annotations_from(data: Any) -> list[CheckAnnotation]:
    """`output.annotations` of a request, checked like GitHub (at most 50, levels, lines)."""
    items = data if isinstance(data, list) else []
    if len(items) > MAX_ANNOTATIONS_PER_REQUEST:
        raise ApiError(422, "Validation Failed", [{
            "resource": "CheckRun", "code": "custom", "field": "annotations",
            "message": f"only {MAX_ANNOTATIONS_PER_REQUEST} annotations are allowed per request"}])
    found = []
    for item in items:
        level = item.get("annotation_level")
        if not item.get("path") or not isinstance(item.get("start_line"), int) or \
                level not in ANNOTATION_LEVELS or not item.get("message"):
            raise ApiError(422, "Validation Failed", [{"resource": "CheckRun", "code": "invalid",
                                                       "field": "annotations"}])
        found.append(CheckAnnotation(item["path"], item["start_line"], int(item.get("end_line",
                                     item["start_line"])), level, item["message"], item.get("title"),
                                     item.get("raw_details")))
    return found


def apply_run_fields(state: GitHubState, run: CheckRun, data: dict[str, Any]) -> None:
    """The fields of a create or update request, with GitHub's rules: a conclusion completes the
    run, `completed` needs a conclusion, annotations are added to those already there."""
    status = data.get("status", run.status)
    conclusion = data.get("conclusion", run.conclusion if status == "completed" else None)
    if status not in RUN_STATUSES or (conclusion is not None and conclusion not in CONCLUSIONS):
        raise ApiError(422, "Validation Failed", [{"resource": "CheckRun", "code": "invalid",
                                                   "field": "status"}])
    if conclusion is not None:
        status = "completed"
    if status == "completed" and conclusion is None:
        raise ApiError(422, "Validation Failed", [{
            "resource": "CheckRun", "code": "missing_field", "field": "conclusion",
            "message": "conclusion is required when status is completed"}])
    output = data.get("output") or {}
    if output and not output.get("summary") and not run.summary:
        raise ApiError(422, "Validation Failed", [{"resource": "CheckRun", "code": "missing_field",
                                                   "field": "summary"}])
    for key in ("title", "summary", "text"):
        if key in output:
            if len(str(output[key] or "").encode()) > CHECK_OUTPUT_MAX_BYTES:  # bytes, as GitHub counts
                raise ApiError(422, "Validation Failed", [{
                    "resource": "CheckRun", "code": "custom", "field": f"output.{key}",
                    "message": f"output.{key} is too long (maximum is {CHECK_OUTPUT_MAX_BYTES} characters)"}])
            setattr(run, key, output[key])
    run.annotations += annotations_from(output.get("annotations"))
    for key in ("name", "external_id", "details_url"):
        if key in data:
            setattr(run, key, data[key])
    run.status, run.conclusion = status, conclusion
    run.completed_at = state.clock() if status == "completed" else None


def new_run(state: GitHubState, repo: FakeRepo, *, app: AppRef, name: str, head_sha: str,
            data: dict[str, Any] | None = None) -> CheckRun:
    suite = suite_for(state, repo, head_sha, app)
    run = CheckRun(state.next_id("check_run"), suite.id, name, head_sha, app, state.clock())
    apply_run_fields(state, run, data or {})
    repo.ci.runs[run.id] = run
    refresh_suite(state, repo, suite)
    return run


def refresh_suite(state: GitHubState, repo: FakeRepo, suite: CheckSuite) -> None:
    """A suite is completed when all its newest runs are; its conclusion is the worst of them."""
    newest: dict[str, CheckRun] = {}
    for run in sorted(repo.ci.runs.values(), key=lambda r: r.id):
        if run.suite_id == suite.id:
            newest[run.name] = run
    runs = list(newest.values())
    suite.updated_at = state.clock()
    if runs and all(r.status == "completed" for r in runs):
        suite.status = "completed"
        order = ("action_required", "timed_out", "failure", "cancelled", "stale", "neutral", "skipped",
                 "success")
        suite.conclusion = min((r.conclusion or "success" for r in runs), key=order.index)
    else:
        suite.status = "in_progress" if any(r.status == "in_progress" for r in runs) else "queued"
        suite.conclusion = None


def add_status(state: GitHubState, repo: FakeRepo, sha: str, *, state_name: str, context: str,
               creator: str, target_url: str | None = None,
               description: str | None = None) -> CommitStatus:
    if state_name not in STATUS_STATES:
        raise ApiError(422, "Validation Failed", [{"resource": "Status", "code": "custom",
                                                   "field": "state",
                                                   "message": "state is not included in the list"}])
    status = CommitStatus(state.next_id("status"), sha, context or "default", state_name, creator,
                          state.clock(), target_url, description)
    repo.ci.statuses.append(status)
    return status


def combined_state(statuses: Sequence[CommitStatus]) -> str:
    """GitHub's combined state: failure if any is error or failure, pending if any is pending or
    none exist, else success."""
    states = {s.state for s in statuses}
    if states & {"error", "failure"}:
        return "failure"
    if not statuses or "pending" in states:
        return "pending"
    return "success"


def latest_per_context(statuses: Sequence[CommitStatus]) -> list[CommitStatus]:
    seen: dict[str, CommitStatus] = {}
    for status in statuses:  # newest first
        seen.setdefault(status.context, status)
    return list(seen.values())
