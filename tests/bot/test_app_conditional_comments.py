"""The reconciler's comment read-back through the App is conditional, like the CI polls: each
listing is sent with the ETag of its last answer, an unchanged page comes back `304 Not
Modified` (which GitHub does not count against the rate limit), and a command comment that no
webhook brought is still found the moment the listing changes."""

from __future__ import annotations

from bot.server.reconciler import reconcile
from jobs.kernel.model import Gate
from tests.bot.conftest import World


def test_the_comment_read_back_is_conditional_and_still_sees_a_new_command(world: World) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    job = world.job()
    assert job.gate is not None and job.gate.kind is Gate.PLAN and job.gate.shown_at is not None
    app = world.ctx.github
    before, kept = world.gh.not_modified, app.conditional.not_modified
    reconcile(world.ctx, comment_grace_s=0)
    reconcile(world.ctx, comment_grace_s=0)
    reconcile(world.ctx, comment_grace_s=0)
    listings = world.gh.requests_to("GET", r"/issues/1/comments$")
    assert len(listings) >= 3
    assert [r.status for r in listings[-2:]] == [304, 304]
    assert all("if-none-match" in r.headers for r in listings[-2:])
    assert world.gh.not_modified - before >= 2 and app.conditional.not_modified - kept >= 2
    assert world.queued() == 0

    # a command whose webhook never came
    world.gh.add_comment(world.repo, 1, "/stepwise approve", user="maria")
    result = reconcile(world.ctx, comment_grace_s=0)
    assert world.gh.requests_to("GET", r"/issues/1/comments$")[-1].status == 200  # changed
    assert len(result.commands) == 1 and world.queued() == 1
    world.work()
    job = world.job()
    assert job.gate is None or job.gate.kind is not Gate.PLAN
