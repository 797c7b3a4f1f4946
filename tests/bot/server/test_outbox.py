"""The outbox and the reconciler, call-level retries, and every write repeated after "done, then
502", against the loopback fake GitHub (real githubkit), a real Redis and RQ worker."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.github.app import GitHubApp
from bot.github.client import Installation
from bot.github.errors import CallRetry, ForgeError
from bot.github.forge import GitHubForge, marker
from bot.server.reconciler import reconcile
from bot.taskcenter.links import Links
from bot.taskcenter.views import gate_view
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.outbox import WAITING, gate_key
from jobs.notes.progress import render_card
from tests.bot.conftest import World, open_world
from tests.kit.github import FakeGitHub
from tests.kit.waiting import pass_time

FAST = (0.01, 0.01, 0.01)  # call-level waits, shortened
OWNER, NAME = "octo", "widgets"
REPO = f"{OWNER}/{NAME}"
BRANCH = "stepwise/issue-1"


@pytest.fixture
def fast_world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as opened:
        yield opened


def gate_comments(world: World, gate_id: str) -> list[str]:
    bodies = world.bodies(1)
    pull = world.gh.pull_for(world.repo, world.job().branch)
    if pull is not None:
        bodies += world.bodies(pull.number)
    return [b for b in bodies if "Waiting at gate `" in b and f"({gate_id})" in b]


# -- the outbox and the reconciler -----------------------------------------------------------------

def test_a_gate_comment_that_fails_is_owed_then_appears_via_the_reconciler(
        fast_world: World) -> None:
    world = fast_world
    world.gh.fail("POST", r"/issues/1/comments$", 502, times=1000)  # GitHub keeps failing
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN  # not `failure`
    assert job.gate.shown_at is None and gate_comments(world, job.gate.id) == []
    owed = {e.key: e for e in job.outbox}
    assert gate_key(job.gate.id) in owed and owed[gate_key(job.gate.id)].tries >= 1
    assert "github_transient" in owed[gate_key(job.gate.id)].last_error
    assert WAITING in render_card(job)  # what `status` and the card say meanwhile
    view = gate_view(job, links=_links())
    assert view is not None and not view.published and WAITING in view.publication

    assert reconcile(world.ctx).still_owed == [job.id]  # GitHub still failing: still owed
    world.gh.failures.clear()  # GitHub recovers
    done = reconcile(world.ctx)
    assert done.published == [job.id]
    job = world.job()
    assert job.outbox == [] and job.gate.shown_at is not None
    assert len(gate_comments(world, job.gate.id)) == 1
    assert WAITING not in render_card(job)
    assert reconcile(world.ctx).published == []  # nothing owed: a pass does nothing


def test_a_fault_while_publishing_never_opens_the_failure_gate(fast_world: World) -> None:
    world = fast_world
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.gh.fail("POST", r"/pulls$", 502, times=1000)  # the draft PR cannot be opened
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE, job.gate
    assert job.batch(1).commit and job.server.transient_failures == 0
    assert [e.key for e in job.outbox] == ["card"]
    assert job.gate.shown_at is not None  # the gate's comment went to the issue meanwhile
    world.gh.failures.clear()
    assert reconcile(world.ctx).published == [job.id]
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and f"Waiting at gate `milestone` ({job.gate.id})" in pull.body
    assert world.job().outbox == []


def test_the_reconciler_handles_a_command_whose_webhook_was_lost(fast_world: World) -> None:
    world = fast_world
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    gate = world.job().gate
    pass_time(world.ctx.clock, 1.01)  # GitHub's timestamps have one-second resolution
    world.gh.add_comment(world.repo, 1, "/stepwise approve", user="maria")  # no webhook comes
    assert reconcile(world.ctx).commands == []  # its webhook may still be on its way
    assert reconcile(world.ctx, comment_grace_s=0).commands  # read back, queued as an event
    world.work()
    job = world.job()
    assert job.gate is None or job.gate.id != gate.id
    assert job.batch(1).commit


# -- call-level retries ----------------------------------------------------------------------------

@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(root=tmp_path / "gh").start()
    fake.add_repo(OWNER, NAME, {"src/a.py": "x = 1\n"}, config="trigger_label: stepwise\n")
    fake.add_issue(REPO, "Tidy", "body")
    yield fake
    fake.stop()


def installation(gh: FakeGitHub, retry: CallRetry | None = None) -> Installation:
    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                    timeout=10, retry=retry if retry is not None else CallRetry(backoff_s=FAST))
    return app.client(1)


def test_a_read_is_retried_in_place_until_it_succeeds(gh: FakeGitHub) -> None:
    inst = installation(gh)
    gh.fail("GET", rf"^/repos/{REPO}$", 502, times=3)
    assert inst.repo(OWNER, NAME).full_name == REPO
    assert [r.status for r in gh.requests_to("GET", rf"^/repos/{REPO}$")] == [502, 502, 502, 200]


def test_a_fault_outlasting_the_call_retries_goes_up_to_the_step(gh: FakeGitHub) -> None:
    inst = installation(gh)
    gh.fail("GET", rf"^/repos/{REPO}$", 502, times=4)
    with pytest.raises(ForgeError) as raised:
        inst.repo(OWNER, NAME)
    assert raised.value.code == "github_transient"
    assert len(gh.requests_to("GET", rf"^/repos/{REPO}$")) == 4


def test_retry_after_is_honoured_and_a_long_one_is_left_to_the_step(gh: FakeGitHub) -> None:
    inst = installation(gh)
    gh.fail_secondary_rate_limit("GET", rf"^/repos/{REPO}$", retry_after=1)
    started = time.monotonic()
    inst.repo(OWNER, NAME)
    assert time.monotonic() - started >= 1.0  # GitHub's Retry-After, not the 0.01 s backoff
    gh.fail_secondary_rate_limit("GET", rf"^/repos/{REPO}$", retry_after=60)
    with pytest.raises(ForgeError) as raised:
        inst.repo(OWNER, NAME)
    assert raised.value.evidence["retry_after"] == 60  # the step's backoff waits for it
    assert gh.requests_to("GET", rf"^/repos/{REPO}$")[-1].status == 403


def test_a_token_mint_is_retried_in_place(gh: FakeGitHub) -> None:
    inst = installation(gh)
    gh.fail("POST", r"/access_tokens$", 502, times=2)
    assert inst.repo(OWNER, NAME).full_name == REPO
    assert [r.status for r in gh.requests_to("POST", r"/access_tokens$")] == [502, 502, 201]


def test_a_comment_is_not_posted_again_blindly_after_a_fault(gh: FakeGitHub) -> None:
    inst = installation(gh)
    gh.fail("POST", r"/issues/1/comments$", 502, times=1)  # refused before it was made
    tag = "<!-- stepwise:j:k -->"
    posted = inst.create_comment(OWNER, NAME, 1, f"hello\n\n{tag}", marker=tag)
    assert [c.id for c in gh.comments_on(REPO, 1)] == [posted.id]
    assert len(gh.requests_to("GET", r"/issues/1/comments$")) == 1  # looked before posting again


# -- every write, repeated after "done, then 502" ----------------------------------------------------

def _pull(gh: FakeGitHub, inst: Installation) -> Any:
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    return inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="card")[0]


def _comment(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    forge = GitHubForge(inst, REPO)  # an answer to one delivery, posted once per key
    return (lambda: forge.reply(None, 1, "start:delivery-1", "Stepwise did not start."),
            lambda: [c.body for c in gh.comments_on(REPO, 1)])


def _pull_create(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    gh.push_files(REPO, BRANCH, {"src/a.py": "x = 3\n"}, "batch 1")
    return (lambda: inst.create_pull(OWNER, NAME, title="t", head=BRANCH, base="main", body="c"),
            lambda: [p.number for p in gh.repos[REPO].pulls.values()])


def _reaction(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    human = gh.add_comment(REPO, 1, "/stepwise approve", user="maria")
    return (lambda: inst.react(OWNER, NAME, human.id),
            lambda: [r.content for r in gh.find_comment(gh.repos[REPO], human.id).reactions])


def _edit(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    mine = inst.create_comment(OWNER, NAME, 1, "v1")
    return (lambda: inst.update_comment(OWNER, NAME, mine.id, "v2"),
            lambda: [c.body for c in gh.comments_on(REPO, 1)])


def _card(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    pull = _pull(gh, inst)
    return (lambda: inst.update_pull_body(OWNER, NAME, pull.number, "card v2"),
            lambda: [(p.number, p.body) for p in gh.repos[REPO].pulls.values()])


def _ready(gh: FakeGitHub, inst: Installation) -> tuple[Callable[[], Any], Callable[[], Any]]:
    pull = _pull(gh, inst)
    return (lambda: inst.mark_ready(pull.node_id),
            lambda: [(p.number, p.draft) for p in gh.repos[REPO].pulls.values()])


WRITES = {  # name: (method, path, set-up returning (the write, what GitHub then holds), expected)
    "comment by its marker": ("POST", r"/issues/1/comments$", _comment, 1),
    "pull request by its head branch": ("POST", r"/pulls$", _pull_create, 1),
    "reaction": ("POST", r"/reactions$", _reaction, 1),
    "comment edit": ("PATCH", r"/issues/comments/\d+$", _edit, 1),
    "progress card": ("PATCH", r"/pulls/\d+$", _card, 1),
    "ready for review": ("POST", r"^/graphql$", _ready, 1),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_write_repeated_after_done_then_502_makes_no_duplicate(gh: FakeGitHub,
                                                                  write: str) -> None:
    method, path, setup, expected = WRITES[write]
    inst = installation(gh)
    action, state = setup(gh, inst)
    gh.fail(method, path, 502, times=1, after=True)  # GitHub applies it, then answers 502
    action()  # retried in place, or looked up before a second create
    first = state()
    assert len(first) == expected, first
    assert gh.requests_to(method, path)[0].status == 502  # the fault did happen
    action()  # and once more, as a retried step would
    assert state() == first, (first, state())


def test_a_gate_comment_made_but_answered_502_is_found_by_its_marker_next_time(
        fast_world: World) -> None:
    """Without call-level retries the plan's first publication stays owed; the gate's
    publication then edits the comment GitHub did make instead of posting a second one."""
    world = fast_world
    world.ctx.github.retry = CallRetry(backoff_s=())
    world.gh.fail("POST", r"/issues/1/comments$", 502, times=1, after=True)
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert world.gh.requests_to("POST", r"/issues/1/comments$")[0].status == 502
    plans = [b for b in world.bodies(1) if marker(job, "plan") in b]
    assert len(plans) == 1 and f"Waiting at gate `plan` ({job.gate.id})" in plans[0]
    assert job.outbox == [] and job.gate.shown_at is not None


def _links() -> Links:
    return Links("https://github.example")


def test_a_step_that_finds_the_reconciler_on_its_job_comes_back_after_it(
        fast_world: World) -> None:
    """A command's step can start while a reconciler pass holds the job's lease; the pass
    never queues the next step, so the step queues itself again instead of giving up."""
    from rq.registry import ScheduledJobRegistry

    from bot.plumbing.leases import Lease
    from bot.plumbing.queue import queue
    from bot.server import steps

    world = fast_world
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    with Lease(world.redis, job.id, ttl_s=5, holder=steps.RECONCILER):
        steps.step_task(world.ctx, {"job_id": job.id})
    scheduled = ScheduledJobRegistry(queue=queue(world.redis)).get_job_ids()
    assert any(task.endswith("after-reconciler") for task in scheduled), scheduled
    with Lease(world.redis, job.id, ttl_s=5):  # a step's lease: that step queues what follows
        steps.step_task(world.ctx, {"job_id": job.id})
    assert ScheduledJobRegistry(queue=queue(world.redis)).get_job_ids() == scheduled


def test_a_work_horse_forked_while_another_thread_holds_the_client_still_calls_github(
        gh: FakeGitHub) -> None:
    """The reconciler once ran its GitHub calls in the worker's reaper thread; a horse RQ
    forked meanwhile inherited the client's lock held, and its step hung with the lease."""
    import os

    app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url,
                    timeout=10)
    with app._lock:  # another thread is minting a token at the moment of the fork
        child = os.fork()
        if child == 0:  # the horse: a fresh lock and client
            try:
                os._exit(0 if app.client(1).repo(OWNER, NAME).full_name == REPO else 1)
            except BaseException:
                os._exit(2)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(child, 9)
    os.waitpid(child, 0)
    raise AssertionError("the forked child hung on a lock its parent held")
