""""Re-run" on one of Stepwise's own check runs (`check_run.rerequested`, delivered signed through
the App): GitHub expects a new run from the App, so the re-run run is published again on its
commit saying what it said (status, conclusion, output, annotations); the job's `Stepwise` run
on a commit the branch has left is superseded, pointing at the head. Another App's run is not
Stepwise's to answer."""

from __future__ import annotations

from pathlib import Path

from tests.bot.conftest import REPO, SECRET, World, open_world
from tests.kit.github_ci_model import CheckRun
from tests.kit.github_ci_webhooks import check_run_event
from tests.kit.webhooks import deliver, make_event


def rerequest(world: World, run: CheckRun) -> None:
    payload = check_run_event(world.gh.render, world.repo, run, "rerequested",
                              installation_id=1, sender="maria")
    answer = deliver(world.url, "check_run", payload, secret=SECRET)
    assert answer.status_code == 202, answer.text
    world.work()


def ours(world: World, name: str, sha: str) -> list[CheckRun]:
    return sorted((r for r in world.repo.ci.runs.values() if r.app.slug == "stepwise"
                   and r.name == name and r.head_sha == sha), key=lambda r: r.id)


def test_a_rerun_stepwise_run_is_published_again(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        world.comment("/stepwise approve", by="maria")
        world.work()
        job = world.job()
        assert job.gate is not None  # the first milestone
        [batch_run] = ours(world, "Stepwise / batch 1", job.batches[0].commit)
        rerequest(world, batch_run)
        again = ours(world, "Stepwise / batch 1", job.batches[0].commit)
        assert len(again) == 2 and again[-1].id > batch_run.id
        assert (again[-1].status, again[-1].conclusion, again[-1].title, again[-1].summary) == \
            (batch_run.status, batch_run.conclusion, batch_run.title, batch_run.summary)
        assert again[-1].external_id == batch_run.external_id

        head_run = ours(world, "Stepwise", job.head_sha)[-1]
        rerequest(world, head_run)
        newest = ours(world, "Stepwise", job.head_sha)[-1]
        assert newest.id > head_run.id and newest.conclusion == head_run.conclusion
        assert newest.summary == head_run.summary

        world.comment("/stepwise approve", by="maria")  # the branch moves on
        world.work()
        head = world.job().head_sha
        assert head != job.head_sha
        rerequest(world, newest)  # the run on a commit the branch has left
        left = ours(world, "Stepwise", job.head_sha)[-1]
        assert left.id > newest.id and left.conclusion == "neutral"
        assert left.title == f"Superseded by {head[:7]}"


def test_another_apps_rerun_is_not_answered(tmp_path: Path, redis_url: str) -> None:
    with open_world(tmp_path, redis_url) as world:
        payload = make_event("check_run.completed", repo=REPO, installation_id=1, sender="maria")
        payload["action"] = "rerequested"
        payload["check_run"]["app"] = {**payload["check_run"]["app"], "slug": "other-ci",
                                       "id": 99}
        answer = deliver(world.url, "check_run", payload, secret=SECRET)
        assert answer.status_code == 202 and answer.json()["status"] == "ignored"
        before = len(world.gh.requests)
        world.work()
        assert not [r for r in world.gh.requests[before:] if "/check-runs" in r.path]
