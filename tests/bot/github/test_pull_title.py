"""GitHub's 256-character title limit, whatever the issue's number: the pull request's title keeps
its whole " (#12345)" suffix and is cut before it, so GitHub never refuses to open it (it did
at 257 characters for issue numbers of five digits and more). Through the App against the
fake GitHub, which refuses a title over 256 characters with 422 as GitHub does."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.basics.github_limits import fit_title
from tests.bot.conftest import ISSUE_BODY, REPO, open_world


@pytest.mark.parametrize("number", [7, 10_000, 1_234_567])
def test_the_title_fits_with_room_for_the_whole_suffix(number: int) -> None:
    suffix = f" (#{number})"
    title = fit_title("stepwise: " + "é" * 300, suffix)
    assert len(title) == 256 and title.endswith("…" + suffix)
    assert fit_title("stepwise: short", suffix) == "stepwise: short" + suffix


def test_a_long_title_on_issue_12345_opens_its_pull_request(tmp_path: Path,
                                                             redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        world.repo.next_number = 12_345
        long_title = "Replace old_sum() with new_sum() " + "everywhere in the codebase " * 9
        world.gh.add_issue(REPO, long_title[:250], ISSUE_BODY, user="maria")
        world.send("issues.labeled", issue_number=12_345, sender="maria")
        world.work()
        world.comment("/stepwise approve", by="maria", on=12_345)
        world.work()
        job = world.job(12_345)
        assert job.server.pull is not None, job.outbox
        title = world.gh.repos[REPO].pulls[job.server.pull.number].title
        assert len(title) == 256 and title.endswith("… (#12345)")
        assert not [r for r in world.gh.requests if r.status == 422 and r.path.endswith("/pulls")]
