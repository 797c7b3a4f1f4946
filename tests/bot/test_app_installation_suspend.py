"""A suspended installation through the App (signed webhooks, the real worker, the strict fake
GitHub, which mints no token for a suspended installation and refuses its tokens with 403 "This
installation has been suspended", as GitHub does). The recorded `installation.suspend` and
`.unsuspend` payloads come from @octokit/webhooks-examples.

Suspended: the installation's running job makes no GitHub call, is parked (not failed) and
says why in the task center and `status`; new deliveries are acknowledged and ignored with a
log line. Unsuspended: the parked job goes on where it stood."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from bot.server.reaper import reap
from bot.taskcenter.links import Links
from bot.taskcenter.views import summarise
from jobs.engine.usecases import status
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import OWNER, World
from tests.kit.npm_fixtures import webhook_examples
from tests.kit.waiting import ShiftedClock


def recorded(action: str) -> dict[str, Any]:
    """GitHub's recorded `installation.<action>` payload, about this world's installation."""
    [payload] = [p for event, p in webhook_examples()
                 if event == "installation" and p.get("action") == action][:1]
    payload = copy.deepcopy(payload)
    payload["installation"]["id"] = 1
    payload["installation"]["account"]["login"] = OWNER
    return payload


def running(world: World) -> Any:
    """The job approved and working (a step queued, no gate): what a suspension interrupts."""
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work(max_jobs=1)  # the comment: the job is running, its next step queued
    job = world.job()
    assert job.is_active and job.gate is None and world.queued() >= 1, (job.status, job.gate)
    return job


def suspended_note(world: World) -> str:
    job = world.job()
    shown = summarise(job, Links("https://github.com")).notice  # the task center
    assert status(job).message == shown  # `status`
    return shown


def test_a_suspended_installation_parks_its_job_ignores_events_and_resumes_when_unsuspended(
        world: World, caplog: pytest.LogCaptureFixture) -> None:
    running(world)
    world.gh.suspend(1, by="octo-owner")
    calls = len(world.gh.requests)
    answer = world.post("installation", json.dumps(recorded("suspend")).encode())
    assert answer.status_code == 202
    world.work()  # the suspend event, and the job's queued step
    job = world.job()
    assert job.status is not JobStatus.FAILED and job.error is None and job.gate is None
    assert "installation on octo-org is suspended" in job.server.parked
    assert "unsuspends" in job.server.parked
    assert any(e.kind == "parked" for e in job.events)
    made = [(r.method, r.path) for r in world.gh.requests[calls:]]
    # The worker confirms the suspension with GitHub before parking anything (a replayed body
    # must not park jobs); the step queued before it met GitHub's 403 once, and parked too.
    assert ("GET", "/app/installations/1") in made and len(made) <= 2, made
    calls = len(world.gh.requests)  # from here on: not one GitHub call, not even a token
    note = suspended_note(world)
    assert note.startswith("⏸️ Parked: the App's installation on octo-org is suspended")
    assert world.queued() == 0  # nothing scheduled for it: no loop of tries
    world.ctx.clock = clock = ShiftedClock()
    clock.advance(world.ctx.settings.lease_ttl_s + 60)
    assert reap(world.ctx) == []  # parked on purpose: not taken for abandoned
    assert world.job().status is job.status and len(world.gh.requests) == calls

    with caplog.at_level(logging.INFO, logger="bot.web.webhooks"):
        ignored = world.comment("/stepwise status", by="maria")
    assert ignored.status_code == 202
    assert ignored.json() == {"status": "ignored", "reason": "installation suspended"}
    assert any("installation is suspended" in r.getMessage() for r in caplog.records)
    assert world.queued() == 0 and len(world.gh.requests) == calls

    world.gh.suspend(1, by=None)
    world.post("installation", json.dumps(recorded("unsuspend")).encode())
    world.work()
    job = world.job()
    assert job.server.parked == "" and any(e.kind == "resumed" for e in job.events)
    assert job.gate is not None and job.gate.kind in (Gate.MILESTONE, Gate.FAILURE), job.gate
    assert any(f"Waiting at gate `{job.gate.kind}`" in b for b in world.bodies(world.job()
               .server.pull.number if job.server.pull else 1))


def test_a_missed_suspend_webhook_parks_the_job_at_github_s_403_and_never_fails_it(
        world: World) -> None:
    running(world)
    world.gh.suspend(1)  # GitHub's webhook never reached the App
    world.work()
    job = world.job()
    assert job.status is not JobStatus.FAILED and job.error is None and job.gate is None
    assert "is suspended" in job.server.parked
    refused = [r for r in world.gh.requests if r.status == 403]
    assert len(refused) == 1  # its first call: then parked, no retry loop
    assert not [e for e in job.outbox if e.refused]  # owed, not refused for good
    assert world.queued() == 0
    world.gh.suspend(1, by=None)
    world.post("installation", json.dumps(recorded("unsuspend")).encode())
    world.work()
    job = world.job()
    assert job.server.parked == "" and job.gate is not None


def test_a_suspension_met_while_landing_a_batch_is_no_failed_attempt(world: World) -> None:
    """The 403 comes in the middle of the step (creating the batch's commit through the Git
    Data API): the attempt is not counted as failed, the job is parked, and after unsuspend
    the batch lands as if nothing happened."""
    running(world)
    world.gh.fail("POST", r"/git/trees$", 403, times=1, body={
        "message": "This installation has been suspended",
        "documentation_url": "https://docs.github.com/rest"})
    world.gh.suspend(1)
    world.gh.suspend(1, by=None)  # only that one answer says so: the job must believe it
    world.work()
    job = world.job()
    assert "is suspended" in job.server.parked and job.gate is None and job.error is None
    assert [r.status for r in world.gh.requests_to("POST", r"/git/trees$")] == [403]
    attempts = [a for b in job.batches for a in b.attempts]
    assert not [a for a in attempts if a.outcome == "failed"], attempts
    world.post("installation", json.dumps(recorded("unsuspend")).encode())
    world.work()
    job = world.job()
    assert job.server.parked == "" and job.batch(1).commit, job.batch(1)
    assert [a.outcome for a in job.batch(1).attempts][-1] == "committed"
