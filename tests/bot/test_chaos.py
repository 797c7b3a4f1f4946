"""The chaos run's quick scenarios (tests/kit/chaos/), and the bugs it found, as tests.

Real redis-server (append-only), real `stepwise worker` processes, the loopback FakeGitHub and
the web app over HTTP, as in `python -m tests.kit.chaos --quick`; jobs have FILES batches instead of
12 to keep the file short on two cores. Each scenario asserts 0 duplicate batch commits (and no
duplicate job, pull request or comment), 0 lost batches and 0 stuck jobs; the fault scenario
also that every gate whose comment its step could not publish was taken up by a reconciler pass
within one reconciler interval of the step ending (docs/reliability.md, "How soon a gate is
shown": not within one interval of its opening, which the step's own publishing adds to).

Below them, one test per bug the chaos run found (docs/reliability.md, "What the chaos run
found"): a surviving worker must take over when the worker running RQ's scheduler dies, a
rate-limited token mint is transient, a command hit by a fault is applied on the retry, a
label whose worker died mid-event still starts its job, a half-made clone is replaced, a label
whose handling keeps failing tells the maintainer, and a retry after planning failed plans
before the job can complete.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rq import Worker
from rq.job import Job as RQJob
from rq.registry import ScheduledJobRegistry

from bot.github.app import GitHubApp
from bot.plumbing.queue import queue
from jobs.basics.errors import RetryClass
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit.chaos.cluster import Cluster, open_cluster
from tests.kit.chaos.kills import kill_trial, run_kill, run_kill_label
from tests.kit.chaos.results import ScenarioResult
from tests.kit.chaos.scenarios import run_baseline, run_duplicates, run_faults, run_redis_restart
from tests.kit.chaos.settings import WORKERS
from tests.kit.github import FakeGitHub
from tests.kit.waiting import wait_until

FILES = 4  # batches per job here (12 in the bench)
FAST = (0.01, 0.01, 0.01)  # call-level retry waits, shortened
STUCK_S = 45.0  # a healthy recovery takes ~3 s with a 2 s lease and a 1 s reaper round

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow, pytest.mark.integration]


def assert_clean(result: ScenarioResult) -> None:
    report = "\n".join(t.line() for t in result.trials)
    assert result.duplicates == 0, report
    assert result.lost == 0, report
    assert result.stuck == 0, report
    assert result.late == 0, report  # every owed gate taken up by the first pass after


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """One installation for the scenarios below (in file order; the Redis restart comes last)."""
    with open_cluster(files=FILES) as opened:
        yield opened


@pytest.fixture(scope="module")
def expected_s(cluster: Cluster) -> float:
    """How long a FILES-batch job takes here without faults (the kill moments' range)."""
    baseline = run_baseline(files=FILES, stuck_timeout_s=STUCK_S, cluster=cluster)
    assert_clean(baseline)
    assert baseline.completed == 1, baseline.trials[0].line()
    return baseline.trials[0].seconds


def test_killed_workers_never_duplicate_or_lose_a_batch(cluster: Cluster,
                                                        expected_s: float) -> None:
    """Three kills (the third right after a push), each worker restarted at once."""
    result = run_kill(3, expected_s=expected_s, files=FILES,
                      stuck_timeout_s=STUCK_S, cluster=cluster)
    assert_clean(result)
    assert result.completed == 3, [t.line() for t in result.trials]


def test_github_faults_on_api_calls_never_duplicate_or_lose_a_batch(cluster: Cluster) -> None:
    """20% of GitHub calls, every endpoint, fail with 502 or a secondary rate limit, or with
    502 after the change was made; the maintainer answers the plan and milestone gates (and a
    failure gate, with retry) only once their comments exist on GitHub."""
    result = run_faults(1, files=FILES, stuck_timeout_s=STUCK_S, cluster=cluster)
    assert_clean(result)
    assert result.completed == 1, result.trials[0].line()


def test_webhooks_and_comments_delivered_twice_act_once(cluster: Cluster) -> None:
    result = run_duplicates(1, files=FILES, stuck_timeout_s=STUCK_S, cluster=cluster)
    assert_clean(result)
    assert result.completed == 1, result.trials[0].line()


def test_a_redis_restart_mid_job_loses_nothing(cluster: Cluster, expected_s: float) -> None:
    result = run_redis_restart(1, expected_s=expected_s, files=FILES, stuck_timeout_s=STUCK_S,
                               cluster=cluster)
    assert_clean(result)
    assert result.completed == 1, result.trials[0].line()


# -- the bugs the chaos run found ------------------------------------------------------------------

def test_the_surviving_worker_recovers_a_job_when_the_scheduler_worker_dies(
    expected_s: float,
) -> None:
    """The reaper once ran as an RQ scheduled task: with the scheduler's worker dead (its lock
    held 61 s, taken over only in a 10-minute maintenance round) the job stayed `running`.
    The wait scales with the fault-free job measured on this machine now (a loaded machine ran
    the job out of a fixed 25 s while it was still committing); that bug needs minutes."""
    import random

    trial = kill_trial(1, expected_s, random.Random(5), after_push=False, restart=False,
                       prefer="scheduler", wait_for_job=True, slow_steps_s=1.5, files=FILES,
                       stuck_timeout_s=max(STUCK_S, 3 * expected_s))
    assert any("killed busy worker" in note for note in trial.notes), trial.line()
    assert trial.completed and not trial.stuck, trial.line()


def test_a_rate_limited_token_mint_is_a_transient_fault(tmp_path: Path) -> None:
    """A 403 secondary rate limit from the token endpoint once meant `installation_removed`."""
    from bot.github.errors import ForgeError

    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("o", "r", {"a.py": "x = 1\n"})
        gh.fail_secondary_rate_limit("POST", r"/app/installations/\d+/access_tokens$")
        app = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem, base_url=gh.base_url)
        with pytest.raises(ForgeError) as raised:
            app.token(1)
        assert raised.value.retry_class is RetryClass.AUTO_RETRY, raised.value.code


def test_a_command_hit_by_a_transient_fault_is_applied_when_retried(tmp_path: Path,
                                                                    redis_url: str) -> None:
    """The comment was once marked handled before it was applied: RQ's retry of the failed
    event then returned at once and the command was dropped without a reply. (The fault
    outlasts the call's own retries, so the event task fails and RQ retries it.)"""
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        assert world.job().gate.kind is Gate.PLAN
        world.gh.fail("GET", r"/collaborators/maria/permission$", 502, times=len(FAST) + 1)
        world.comment("/stepwise approve", by="maria")
        world.work()  # the permission check meets the 502s: RQ schedules the event's retry
        registry = ScheduledJobRegistry(queue=queue(world.redis))
        retried = registry.get_job_ids()  # type: ignore[no-untyped-call]
        assert retried, "the failed event was not scheduled for a retry"
        for job_id in retried:  # what RQ's scheduler does when the retry is due
            job = RQJob.fetch(job_id, connection=world.redis)
            registry.remove(job)
            queue(world.redis).enqueue_job(job)
        world.work(max_jobs=1)
        job = world.job()
        assert job.status is not JobStatus.AWAITING_HUMAN or job.gate.kind is not Gate.PLAN


def test_a_label_whose_worker_died_still_starts_the_job() -> None:
    """The event task once stayed `started` (RQ gives abandoned tasks up in a 10-minute
    maintenance round), nothing reaped it, and GitHub's redelivery was answered `duplicate`."""
    result = run_kill_label(1, files=FILES, stuck_timeout_s=30, redeliver_after_s=5)
    assert result.stuck == 0 and result.completed == 1, result.trials[0].line()


@pytest.mark.parametrize("left", [["description"],
                                  ["HEAD", "config", "description", "refs/", "info/", "hooks/"]],
                         ids=["before-HEAD", "before-objects"])
def test_a_clone_left_half_done_by_a_killed_worker_is_replaced(world: World,
                                                               left: list[str]) -> None:
    """What the kill-label scenario left behind, at two moments of `git clone --bare`."""
    partial = world.ctx.settings.workdir / "repos" / "octo-org" / "widgets.git"
    partial.mkdir(parents=True)
    for name in left:
        if name.endswith("/"):
            (partial / name).mkdir()
        else:
            (partial / name).write_text("ref: refs/heads/main\n" if name == "HEAD" else "")
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.ctx.store.find(REPO, 1) is not None


def _run_due_retries(world: World) -> None:
    """What RQ's scheduler does when delayed tasks fall due: queue them, then work."""
    registry = ScheduledJobRegistry(queue=queue(world.redis))
    for job_id in registry.get_job_ids():  # type: ignore[no-untyped-call]
        task = RQJob.fetch(job_id, connection=world.redis)
        registry.remove(task)
        queue(world.redis).enqueue_job(task)
    world.work()


def test_a_label_whose_handling_keeps_failing_tells_the_maintainer(tmp_path: Path,
                                                                   redis_url: str) -> None:
    """Bug 6: a `labeled` delivery failing on every try (the first run and RQ's three retries)
    was dropped silently: no job, no comment. The last try now says so on the issue."""
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        world.gh.fail("GET", r"/collaborators/maria/permission$", 502, times=1000)
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work()
        for _ in range(3):  # each retry when RQ's scheduler would queue it
            _run_due_retries(world)
        assert world.ctx.store.find(REPO, 1) is None
        told = [c.body for c in world.gh.comments_on(world.repo, 1) if c.user.endswith("[bot]")]
        assert len(told) == 1 and "could not start a job for this label" in told[0], told
        assert "add it again" in told[0]


def test_a_retry_after_planning_failed_plans_before_it_completes(tmp_path: Path,
                                                                 redis_url: str) -> None:
    """Bug 7: a failure gate opened before any plan existed was passed by `retry` into
    `running` with no batches, and the job `completed` with every target untouched."""
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        world.send("issues.labeled", issue_number=1, sender="maria")
        world.work(max_jobs=1)  # the label: a queued job, its first step not run yet
        world.gh.fail("GET", rf"^/repos/{REPO}$", 502, times=1000)  # every step's first read
        world.work()
        for _ in range(3):  # the three backed-off retries of the first step
            _run_due_retries(world)
        job = world.job()
        assert job.gate is not None and job.gate.kind is Gate.FAILURE and not job.batches
        assert job.gate.while_planning
        world.gh.failures.clear()
        world.comment("/stepwise retry", by="maria")
        world.work()
        job = world.job()
        assert job.batches, f"{job.status} with no batch planned"
        assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN


def test_workers_ride_out_a_redis_outage_without_being_restarted(cluster: Cluster,
                                                                 expected_s: float) -> None:
    """Redis down for 8 s mid-batch (as long as the issue's 18 s outage for what it exercises:
    longer than the lease, the reaper round and every call's timeout); nobody restarts a
    worker. Every worker stays up, reconnects with back-off, and the job finishes with no
    batch lost or pushed twice."""
    result = run_redis_restart(1, expected_s=expected_s, files=FILES, stuck_timeout_s=STUCK_S,
                               cluster=cluster, downtime_s=8.0, restart_workers=False, seed=5)
    assert_clean(result)
    assert result.completed == 1, result.trials[0].line()
    assert not any("exited" in note for note in result.notes), result.notes
    alive = cluster.workers.alive()
    assert len(alive) == WORKERS, [p.tail(3) for p in cluster.workers.procs]
    # Every live worker process is registered again. The cluster is shared by the module's
    # tests, so registrations of workers killed by earlier tests may linger: compare by pid.
    # A worker that began waiting early in the outage may sleep one more back-off step (up to
    # 15 s) before it finds Redis again.
    wait_until(lambda: {p.pid for p in alive} <= {w.pid for w in Worker.all(
        queue=queue(cluster.redis))}, timeout=60, what="every worker registered with Redis again")
