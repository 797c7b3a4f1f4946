"""What the task center and /metrics show of the repository's CI: the job page's CI section
(the wait and every verdict, with links) and the CI counters, from records in a real Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from bot.observability import metrics
from bot.plumbing.redis_store import RedisStore
from jobs.features.ci.record import (
    CiCheck,
    CiResult,
    CiWait,
    awaiting_ci,
    ci,
    ci_batch,
    start_wait,
)
from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import START, build
from tests.bot.taskcenter.test_metrics import stored
from tests.kit.previous_release import previous_release_tree

SHA = "a" * 40
RED = CiCheck(name="tests", status="completed", conclusion="failure",
              url="https://github.com/acme/api/actions/runs/7")


def waiting_job() -> Job:
    job = build("running", 0)
    job.id, job.number = "99-c1c1c1c1c1c1", 99  # beside the seeded jobs
    ci(job).results = [CiResult(scope="milestone", number=1, sha="b" * 40, state="failed", at=START,
                               checks=[RED], accepted=True)]
    job.batch(3).status = awaiting_ci()
    ci_batch(job.batch(1)).results = [CiResult(scope="batch", number=1, sha="d" * 40, state="passed",
                                        at=START)]
    ci(job).wait = CiWait(sha=SHA, since=START, scope="milestone", number=2,
                         progress="waiting for CI: 1 of 2 checks done",
                         checks=[CiCheck(name="lint", status="completed", conclusion="success"),
                                 CiCheck(name="tests", status="in_progress",
                                         url="javascript:alert(1)")])
    return job


def test_the_job_page_shows_the_wait_and_every_verdict_with_links(
        logged_in: TestClient, connection: redis.Redis) -> None:
    job = RedisStore(connection).save(waiting_job())
    html = logged_in.get(f"/jobs/{job.id}").text
    section = html[html.index('<section class="ci" id="ci">'):]
    section = section[:section.index("</section>")]
    assert "Waiting for CI</strong> on <code>aaaaaaa</code>" in section
    assert '<a href="#milestone-2">milestone 2</a>' in section
    assert "waiting for CI: 1 of 2 checks done" in section and "timeout 60 min" in section
    assert "<code>lint</code> success" in section and "<code>tests</code> in_progress" in section
    assert "javascript:" not in section  # only https links are links
    assert "failed — accepted with approve" in section
    assert "<td>batch 1</td><td><code>ddddddd</code></td>" in section
    tally = html[html.index('<span class="tally">'):]
    assert tally[:tally.index("<progress")] == (  # CI's words for the count, not its key
        '<span class="tally">batches 1/3 completed · files: 2 committed</span> (1 awaiting CI)')
    assert '<a href="https://github.com/acme/api/actions/runs/7" rel="noopener noreferrer">' \
        in section


def test_ci_waits_and_outcomes_are_counted_once_each(connection: redis.Redis) -> None:
    connection.flushdb()
    job = build("running", 0)
    metrics.observe(connection, job)
    start_wait(job, CiWait(sha=SHA, since=START, scope="batch", number=2))
    metrics.observe(connection, job)
    metrics.observe(connection, job)  # the same wait
    ci(job).wait = None
    ci_batch(job.batch(2)).results.append(CiResult(scope="batch", number=2, sha=SHA, state="failed",
                                            at=START))
    metrics.observe(connection, job)
    start_wait(job, CiWait(sha=SHA, since=START, scope="milestone", number=1))
    ci(job).results.append(CiResult(scope="milestone", number=1, sha=SHA, state="timed_out",
                                   at=START))
    metrics.observe(connection, job)
    ci(job).results[-1].accepted = True
    metrics.observe(connection, job)
    metrics.observe(connection, job)
    tally = stored(connection)
    assert tally[("stepwise_ci_waits_total", (("scope", "batch"),))] == 1
    assert tally[("stepwise_ci_waits_total", (("scope", "milestone"),))] == 1
    outcomes = {labels: n for (name, labels), n in tally.items()
                if name == "stepwise_ci_outcomes_total"}
    assert outcomes == {(("outcome", "failed"), ("scope", "batch")): 1,
                        (("outcome", "timed_out"), ("scope", "milestone")): 1,
                        (("outcome", "accepted"), ("scope", "milestone")): 1}


# Run in the previous release's tree: the job (given on stdin) with CI verdicts in that release's
# fields, saved by its store and observed by its metrics, as its server left a job waiting for
# CI on milestone 2 when the upgrade came.
OLD_OBSERVED = """
import json, sys
from datetime import UTC, datetime
import redis
from bot.observability import metrics
from bot.plumbing.redis_store import RedisStore
from jobs.composition import install
from jobs.kernel.job import Job
from jobs.kernel.records import CiResult, CiWait

install()
connection = redis.Redis.from_url(sys.argv[1])
job = Job.model_validate(json.loads(sys.stdin.read()))
at, first, second = datetime.now(UTC), job.batches[0], job.batches[1]
job.ci_results = [CiResult(scope="milestone", number=1, sha="b" * 40, state="failed", at=at,
                           accepted=True)]
first.ci_results = [CiResult(scope="batch", number=1, sha="c" * 40, state="passed", at=at)]
second.ci_results = [CiResult(scope="batch", number=2, sha="d" * 40, state="failed", at=at)]
job.ci_wait = CiWait(sha="e" * 40, since=at, scope="milestone", number=2)
metrics.observe(connection, RedisStore(connection).save(job))
print(job.id)
"""


def old_release_record(tree: Path, redis_url: str) -> str:
    """A running job saved and observed by the previous release (OLD_OBSERVED); its id."""
    doc = build("running", 0).model_dump(mode="json", exclude_defaults=True)
    doc.pop("parts", None)  # the job's own fields only: that release has no parts
    for batch in doc["batches"]:
        batch.pop("parts", None)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    wrote = subprocess.run([sys.executable, "-c", OLD_OBSERVED, redis_url], input=json.dumps(doc),
                           cwd=tree, env=env, text=True, capture_output=True, check=False,
                           timeout=120)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    return wrote.stdout.strip()


def ci_counts(connection: redis.Redis) -> dict[tuple[str, str, str], float]:
    return {(name, dict(labels)["scope"], dict(labels).get("outcome", "")): n
            for (name, labels), n in stored(connection).items()
            if name.startswith("stepwise_ci_") and n}


def test_ci_verdicts_counted_by_the_previous_release_are_not_counted_again_after_the_upgrade(
        connection: redis.Redis, redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    connection.flushdb()
    tree = previous_release_tree(tmp_path_factory.mktemp("previous-release"))
    job_id = old_release_record(tree, redis_url)
    counted = {("stepwise_ci_waits_total", "milestone", ""): 1,
               ("stepwise_ci_outcomes_total", "milestone", "failed"): 1,
               ("stepwise_ci_outcomes_total", "milestone", "accepted"): 1,
               ("stepwise_ci_outcomes_total", "batch", "passed"): 1,
               ("stepwise_ci_outcomes_total", "batch", "failed"): 1}
    assert ci_counts(connection) == counted  # as the previous release counted them
    store = RedisStore(connection)
    job = store.load_id(job_id)
    assert job is not None and [r.state for r in ci(job).results] == ["failed"]
    metrics.observe(connection, job)  # the first observation of this release
    assert ci_counts(connection) == counted

    ci(job).results.append(CiResult(scope="milestone", number=2, sha="e" * 40, state="passed",
                                    at=START))  # the verdict the job waited for
    ci_batch(job.batch(2)).results[0].accepted = True
    start_wait(job, CiWait(sha=SHA, since=START, scope="batch", number=3))
    metrics.observe(connection, store.save(job))
    metrics.observe(connection, job)  # the same record again
    assert ci_counts(connection) == {**counted,
                                     ("stepwise_ci_waits_total", "batch", ""): 1,
                                     ("stepwise_ci_outcomes_total", "milestone", "passed"): 1,
                                     ("stepwise_ci_outcomes_total", "batch", "accepted"): 1}
