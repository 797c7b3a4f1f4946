"""What the CI end-to-end tests through the App share (tests/bot/test_app_ci_*.py): a world whose
repository config has the `ci` block of the test's `ci_config` marker, the CI player wired to the
app's webhook URL, and small readers of the job and the check runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.features.ci.record import ci as ci_part
from jobs.kernel.job import Job
from tests.bot.conftest import REPO, SECRET, World, open_world
from tests.kit.github_ci import CiPlayer
from tests.kit.github_ci_model import CheckRun
from tests.kit.local_e2e import BROKEN_MODULE, CI_WORKFLOW, config_text, sample_files

FAILING_LOG = "".join(f"2026-12-01T12:00:00.0000000Z step {n}\n" for n in range(150)) + (
    f"2026-12-01T12:00:01.0000000Z FAILED tests/test_calc.py::test_total - AssertionError\n"
    f"2026-12-01T12:00:01.0000000Z {BROKEN_MODULE}:3: AssertionError\n")


@pytest.fixture
def ci_world(request: pytest.FixtureRequest, tmp_path: Path, redis_url: str) -> Iterator[World]:
    """The sample (3 batches, 2 per milestone) with `ci` from the test's `ci_config` marker."""
    marker = request.node.get_closest_marker("ci_config")
    ci: dict[str, Any] = dict(marker.args[0]) if marker else {"wait": "per_milestone"}
    files = {**sample_files(config=config_text(ci=ci)), **CI_WORKFLOW}
    # Splitting stays off: these stories are about CI's verdict on a whole batch's commit (a
    # red candidate withdrawn, then retried whole as one- and llm-batches still are); a batch
    # split by CI has its own stories (tests/bot/test_app_bisect_ci.py).
    with open_world(tmp_path, redis_url, files=files, ci_poll_s=30,
                    split_batches=False) as opened:
        yield opened


def player(world: World) -> CiPlayer:
    return CiPlayer(world.gh, world.repo, deliver_to=world.url, secret=SECRET)


def approved(world: World) -> Job:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    world.comment("/stepwise approve", by="maria")
    world.work()
    return world.job()


def waited_sha(job: Job) -> str:
    assert ci_part(job).wait is not None, f"the job does not wait for CI ({job.status}, {job.gate})"
    return ci_part(job).wait.sha


def job_check(world: World, sha: str) -> CheckRun:
    runs = [r for r in world.gh.repos[REPO].ci.runs_on(sha) if r.name == "Stepwise"]
    assert len(runs) == 1, [(r.name, r.external_id) for r in runs]  # one run per commit, ever
    return runs[0]


def pull_number(world: World, job: Job) -> int:
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None
    return pull.number
