"""A `/stepwise` comment on an issue without a job gets one polite answer (or the help table),
never a rebuild that fails and is retried. Through signed webhooks, the worker and the fake."""

from __future__ import annotations

from rq.registry import FailedJobRegistry

from bot.plumbing.queue import queue
from tests.bot.conftest import ISSUE_BODY, REPO, World


def test_commands_on_an_issue_without_a_job_are_answered_once(world: World) -> None:
    # A task with a valid spec that was never labelled: no job, no branch.
    number = world.gh.add_issue(REPO, "Replace old_sum()", ISSUE_BODY, user="rita")
    world.comment("/stepwise help", by="rita", on=number)
    world.comment("/stepwise approve", by="maria", on=number)
    world.work()
    replies = [b for b in world.bodies(number) if "<!-- stepwise:" in b or "`/stepwise" in b]
    assert any("/stepwise help" in b and "|" in b for b in replies), replies  # the help table
    refusals = [b for b in world.bodies(number) if "There is no Stepwise job" in b]
    assert len(refusals) == 1, world.bodies(number)
    assert "remove the trigger label and add it again to start it over" in refusals[0]
    assert FailedJobRegistry(queue=queue(world.redis)).count == 0
    assert world.queued() == 0  # nothing left to retry
    assert world.ctx.store.find(REPO, number) is None
