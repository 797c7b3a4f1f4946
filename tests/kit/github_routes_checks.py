"""REST endpoints of the fake GitHub for the Checks API: check runs (create, update, get, list for a
ref with `check_name`, `status`, `filter`, `app_id`, paging; annotations; rerequest) and check
suites (list for a ref, rerequest). Writes need `checks: write`, reads `checks: read`."""

from __future__ import annotations

from typing import Any

from tests.kit import github_ci_render as shapes
from tests.kit.github_api import REPO, ApiError, Call, Reply, paginate, route
from tests.kit.github_ci_model import CheckRun
from tests.kit.github_ci_ops import apply_run_fields, new_run, own_app, refresh_suite, resolve_sha

CHECKS_READ = "checks=read"
CHECKS_WRITE = "checks=write"


def paged(call: Call, items: list[Any], base_path: str, key: str) -> Reply:
    """GitHub's `{total_count, <key>: [...]}` lists, paged like the plain ones (Link header)."""
    reply = paginate(call, items, base_path)
    return Reply(200, {"total_count": len(items), key: reply.body}, reply.headers)


def run_of(call: Call) -> CheckRun:
    run = call.r.ci.runs.get(int(call.params["run_id"]))
    if run is None:
        raise ApiError(404, "Not Found")
    return run


@route("POST", REPO + r"/check-runs", permissions=CHECKS_WRITE)
def create_check_run(call: Call) -> Reply:
    name, head_sha = call.field("name"), call.field("head_sha")
    if not name or not head_sha:
        missing = "name" if not name else "head_sha"
        raise ApiError(422, "Invalid request.\n\n\"" + missing + "\" wasn't supplied.")
    sha = resolve_sha(call.r, str(head_sha))
    run = new_run(call.state, call.r, app=own_app(call.state), name=str(name), head_sha=sha,
                  data=call.data)
    call.state.effect(f"{call.r.full_name}@{sha[:7]}:check-run-created:{name}:{run.status}")
    return Reply(201, shapes.check_run(call.render, call.r, run))


@route("PATCH", REPO + r"/check-runs/(?P<run_id>\d+)", permissions=CHECKS_WRITE)
def update_check_run(call: Call) -> Reply:
    run = run_of(call)
    if run.app.id != call.state.app_id:
        raise ApiError(403, f"Invalid app_id `{call.state.app_id}` - check run can only be modified "
                            "by its creator")
    if run.status == "completed":  # GitHub keeps a completed run as it is: a new state is a new run
        raise ApiError(422, "Validation Failed", [{
            "resource": "CheckRun", "code": "custom", "field": "status",
            "message": "a completed check run cannot be updated; create a new check run"}])
    apply_run_fields(call.state, run, call.data)
    refresh_suite(call.state, call.r, call.r.ci.suites[run.suite_id])
    call.state.effect(f"{call.r.full_name}@{run.head_sha[:7]}:check-run-updated:{run.name}:"
                      f"{run.conclusion or run.status}")
    return Reply(200, shapes.check_run(call.render, call.r, run))


@route("GET", REPO + r"/check-runs/(?P<run_id>\d+)", permissions=CHECKS_READ)
def get_check_run(call: Call) -> Reply:
    return Reply(200, shapes.check_run(call.render, call.r, run_of(call)))


@route("GET", REPO + r"/check-runs/(?P<run_id>\d+)/annotations", permissions=CHECKS_READ)
def list_annotations(call: Call) -> Reply:
    run = run_of(call)
    items = [shapes.annotation(call.render, call.r, a) for a in run.annotations]
    return paginate(call, items, f"/repositories/{call.r.id}/check-runs/{run.id}/annotations")


@route("POST", REPO + r"/check-runs/(?P<run_id>\d+)/rerequest", permissions=CHECKS_WRITE)
def rerequest_check_run(call: Call) -> Reply:
    """GitHub lets an App re-request only its own check runs (403 otherwise)."""
    run = run_of(call)
    if run.app.id != call.state.app_id:
        raise ApiError(403, "This check run is not rerequestable or does not belong to the "
                            "authenticated GitHub App")
    run.rerequests += 1
    call.state.effect(f"{call.r.full_name}@{run.head_sha[:7]}:check-run-rerequested:{run.name}")
    return Reply(201, {})


@route("GET", REPO + r"/commits/(?P<ref>[^/]+)/check-runs", permissions=CHECKS_READ)
def list_check_runs_for_ref(call: Call) -> Reply:
    sha = resolve_sha(call.r, call.params["ref"])
    runs = sorted(call.r.ci.runs_on(sha), key=lambda r: -r.id)
    if call.query.get("filter", "latest") == "latest":
        newest: dict[tuple[int, str], CheckRun] = {}
        for run in runs:
            newest.setdefault((run.app.id, run.name), run)
        runs = list(newest.values())
    elif call.query.get("filter") != "all":
        raise ApiError(422, "Invalid request.\n\nfilter must be one of latest, all")
    if name := call.query.get("check_name"):
        runs = [r for r in runs if r.name == name]
    if status := call.query.get("status"):
        runs = [r for r in runs if r.status == status]
    if app_id := call.query.get("app_id"):
        runs = [r for r in runs if str(r.app.id) == app_id]
    items = [shapes.check_run(call.render, call.r, r) for r in runs]
    return paged(call, items, f"/repositories/{call.r.id}/commits/{sha}/check-runs", "check_runs")


@route("GET", REPO + r"/commits/(?P<ref>[^/]+)/check-suites", permissions=CHECKS_READ)
def list_check_suites_for_ref(call: Call) -> Reply:
    sha = resolve_sha(call.r, call.params["ref"])
    suites = sorted(call.r.ci.suites_on(sha), key=lambda s: s.id)
    if app_id := call.query.get("app_id"):
        suites = [s for s in suites if str(s.app.id) == app_id]
    items = [shapes.check_suite(call.render, call.r, s) for s in suites]
    return paged(call, items, f"/repositories/{call.r.id}/commits/{sha}/check-suites",
                 "check_suites")


@route("POST", REPO + r"/check-suites/(?P<suite_id>\d+)/rerequest", permissions=CHECKS_WRITE)
def rerequest_check_suite(call: Call) -> Reply:
    """The suite goes back to `queued` (its app is told with check_suite.rerequested). Only the
    App that owns the suite may re-request it: another app's (GitHub Actions' included) is
    refused, as GitHub does."""
    suite = call.r.ci.suites.get(int(call.params["suite_id"]))
    if suite is None:
        raise ApiError(404, "Not Found")
    if suite.app.id != call.state.app_id:
        raise ApiError(422, "This check suite is not rerequestable by the authenticated "
                            "GitHub App: only the app that created it may re-request it")
    suite.rerequests += 1
    suite.status, suite.conclusion = "queued", None
    call.state.effect(f"{call.r.full_name}@{suite.head_sha[:7]}:check-suite-rerequested:"
                      f"{suite.app.slug}")
    return Reply(201, {})
