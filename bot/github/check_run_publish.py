"""Publishing one of Stepwise's check runs (part of the GitHub adapter), with every annotation.

GitHub takes at most 50 annotations per create or update request and adds those of each update
to the ones the run already has; a completed run can never be changed again. A run with more
annotations is therefore created `in_progress` with the first 50, the rest follow in further
updates of the same run while it is still in progress, and only the last update completes it
(with the conclusion the draft asks for). A publication interrupted half-way (a 502, a worker
that died) goes on from the run's `annotations_count`, so no annotation is sent twice.
"""

from __future__ import annotations

from typing import Any

from bot.github.ci import JOB_CHECK_SUFFIX, RepositoryCi, shows
from bot.github.client import response_json
from jobs.basics.github_limits import ANNOTATIONS_PER_REQUEST
from jobs.kernel.job import Job
from jobs.kernel.records import JobCheckRun


def send_check_run(ci: RepositoryCi, job: Job, body: dict[str, Any]) -> None:
    """Create or update one check run. The job's `Stepwise` run lives on the branch head; when
    the head moved, the run left on the old head (in progress, or asking at a gate) is closed as
    `neutral`, "superseded", so no commit shows a job that waits forever (a completed run by a
    newer run of the same name: GitHub shows the newest)."""
    run_id = upsert_with_annotations(ci, body)
    if not str(body["external_id"]).endswith(JOB_CHECK_SUFFIX):
        return
    last = job.server.job_check_run
    if last is not None and last.sha != body["head_sha"] and last.open:
        ci.supersede_check_run(last.id, str(body["head_sha"]), old_sha=last.sha,
                               external_id=str(body["external_id"]), completed=last.completed)
    job.server.job_check_run = JobCheckRun(
        sha=str(body["head_sha"]), id=run_id,
        open=body.get("conclusion") in (None, "action_required"),
        completed=body.get("status") == "completed")


def upsert_with_annotations(ci: RepositoryCi, body: dict[str, Any]) -> int:
    """Make the run `body` describes what GitHub shows, all its annotations included, 50 a
    request; its id."""
    output = dict(body.get("output") or {})
    notes = list(output.get("annotations") or [])
    if len(notes) <= ANNOTATIONS_PER_REQUEST:
        return ci.upsert_check_run(body)
    existing = ci.find_check_run(body)
    if existing is not None and existing.get("status") == "completed" and shows(existing, body):
        return int(existing["id"])  # a repeated publication: the run already says it all
    if existing is not None and existing.get("status") != "completed":
        run_id = int(existing["id"])
        sent = min(len(notes), int((existing.get("output") or {}).get("annotations_count") or 0))
    else:  # none yet, or a completed one saying something else: a new run, still in progress
        first = {k: v for k, v in body.items() if k != "conclusion"}
        first.update(status="in_progress",
                     output={**output, "annotations": notes[:ANNOTATIONS_PER_REQUEST]})
        run_id = ci.upsert_check_run(first)
        sent = ANNOTATIONS_PER_REQUEST
    rest = notes[sent:]
    chunks = [rest[at:at + ANNOTATIONS_PER_REQUEST]
              for at in range(0, len(rest), ANNOTATIONS_PER_REQUEST)] or [[]]
    words = {k: v for k, v in output.items() if k != "annotations"}
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        update: dict[str, Any] = {"status": body["status"] if last else "in_progress",
                                  "output": {**words, **({"annotations": chunk} if chunk else {})}}
        if last and body["status"] == "completed" and body.get("conclusion") is not None:
            update["conclusion"] = body["conclusion"]
        if last and body.get("details_url"):
            update["details_url"] = body["details_url"]
        _update(ci, run_id, update)
    return run_id


def _update(ci: RepositoryCi, run_id: int, update: dict[str, Any]) -> None:
    ci.client._call(lambda gh: gh.checks.update(ci.owner, ci.name, run_id, data=update))


def republish(ci: RepositoryCi, run_id: int, *, superseded_by: str = "") -> int:
    """"Re-run" pressed on one of Stepwise's runs (check_run.rerequested): GitHub expects a new
    run from the App. The new run says what the old one said (its status, conclusion, output and
    annotations, read back from GitHub), on the same commit; `superseded_by` (the job's head
    moved on) makes it a `neutral` run pointing there instead. Its id."""
    old = ci.client._call(lambda gh: response_json(gh.checks.get(ci.owner, ci.name, run_id)))
    output = old.get("output") or {}
    body: dict[str, Any] = {
        "name": old["name"], "head_sha": old["head_sha"], "status": old.get("status"),
        "external_id": old.get("external_id") or "",
        "output": {"title": output.get("title") or old["name"],
                   "summary": output.get("summary") or "", "text": output.get("text") or ""}}
    if old.get("details_url"):
        body["details_url"] = old["details_url"]
    if old.get("status") == "completed":
        body["conclusion"] = old.get("conclusion") or "neutral"
    if superseded_by:
        body.update(status="completed", conclusion="neutral", output={
            "title": f"Superseded by {superseded_by[:7]}",
            "summary": f"The branch moved on: see the run on `{superseded_by[:7]}`."})
    else:
        body["output"]["annotations"] = [
            {"path": a.path, "start_line": a.line, "end_line": a.line, "message": a.message,
             "annotation_level": a.level if a.level in ("notice", "warning", "failure")
             else "warning", **({"title": a.title} if a.title else {})}
            for a in ci.annotations(run_id)]
    notes = body["output"].get("annotations") or []
    first = {**body, "output": {**body["output"], "annotations": notes[:ANNOTATIONS_PER_REQUEST]}}
    if len(notes) > ANNOTATIONS_PER_REQUEST:
        first["status"] = "in_progress"
        first.pop("conclusion", None)
    created = ci.client._call(lambda gh: response_json(gh.checks.create(ci.owner, ci.name,
                                                                        data=first)))
    new_id = int(created["id"])
    rest = notes[ANNOTATIONS_PER_REQUEST:]
    words = {k: v for k, v in body["output"].items() if k != "annotations"}
    for at in range(0, len(rest), ANNOTATIONS_PER_REQUEST):
        last = at + ANNOTATIONS_PER_REQUEST >= len(rest)
        update: dict[str, Any] = {"status": body["status"] if last else "in_progress",
                                  "output": {**words,
                                             "annotations": rest[at:at + ANNOTATIONS_PER_REQUEST]}}
        if last and body.get("conclusion"):
            update["conclusion"] = body["conclusion"]
        _update(ci, new_id, update)
    return new_id
