"""Jobs in every status, stored in a real Redis, and the web app with the task center turned on."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from fastapi.testclient import TestClient

from bot.plumbing.redis_store import RedisStore
from bot.settings import Settings
from bot.web.app import create_app
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.kernel.job import Batch, Job, OpenGate
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.kernel.records import Attempt, CommandEvidence, Event, FinalReview, PullRequest
from tests.kit.records import make_job

TOKEN = "dashboard-t0ken-for-the-tests-Zq8#kV2!pX7@wM4"
START = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
EVIL_TITLE = '<script>alert("owned")</script> Tidy & "quote" imports'
SHA1, SHA2, SHA3 = "1" * 40, "2" * 40, "3" * 40
VALIDATE = ["python", "-m", "pytest", "-q"]
TAIL = "FAILED tests/test_total.py::test_total - AssertionError: 9 != 10\n1 failed, 5 passed"


def run(argv: list[str], code: int, tail: str = "", seconds: float = 2.5) -> CommandEvidence:
    return CommandEvidence(argv=argv, exit_code=code, duration_s=seconds, output_tail=tail,
                           output_lines=tail.count("\n") + 1 if tail else 0, isolated=True)


def attempt(number: int, outcome: str, at: datetime, *, seconds: float = 42.0,
            code: int = 0, error: ErrorInfo | None = None, finished: bool = True) -> Attempt:
    return Attempt(number=number, started_at=at, outcome=outcome if finished else "running",
                   finished_at=at + timedelta(seconds=seconds) if finished else None,
                   edit_summary="replaced old_sum( with new_sum( in 2 files",
                   commands=[run(VALIDATE, code, TAIL if code else "6 passed")],
                   lines_added=2, lines_removed=2, error=error)


FAILED_VALIDATION = ErrorInfo(
    code="validation_failed", retry_class=RetryClass.NEEDS_HUMAN,
    message="validation failed: `python -m pytest -q` exited 1",
    hint="read the output tail; fix the code or the spec, then retry or skip the batch",
    evidence={"output_tail": TAIL, "exit_code": 1})


def batches(*statuses: BatchStatus, at: datetime) -> list[Batch]:
    made = []
    for number, status in enumerate(statuses, start=1):
        batch = Batch(number=number, milestone=(number + 1) // 2, targets=2, status=status,
                      files=[f"calc/m{number}/a.py", f"calc/m{number}/b.py"])
        if status in (BatchStatus.COMPLETED, BatchStatus.REVERTED):
            batch.attempts = [attempt(1, "validated", at)]
            batch.commit, batch.summary = [SHA1, SHA2, SHA3][(number - 1) % 3], "moved to new_sum()"
        if status is BatchStatus.REVERTED:
            batch.revert_commit, batch.reason = "4" * 40, "reverted by /stepwise revert 3"
        if status is BatchStatus.SKIPPED:
            batch.reason = "needs a manual import fix"
        if status is BatchStatus.FAILED:
            batch.attempts = [attempt(1, "failed", at, code=1, error=FAILED_VALIDATION),
                              attempt(2, "failed", at + timedelta(minutes=2), code=1,
                                      error=FAILED_VALIDATION)]
            batch.consecutive_failures = 2
        if status is BatchStatus.IN_PROGRESS:
            batch.attempts = [attempt(1, "running", at, finished=False)]
        made.append(batch)
    return made


def pull(number: int, repo: str) -> PullRequest:
    return PullRequest(number=number, url=f"https://github.com/{repo}/pull/{number}",
                       draft=True, node_id="PR_x")


def gate(kind: Gate, at: datetime, **extra: Any) -> OpenGate:
    return OpenGate(id=f"{kind}-1", kind=kind, opened_at=at, reason=f"{kind} reason", **extra)


# name -> (repo, number, status, gate, batch statuses, extra fields)
P, IP, C, F, S, R = (BatchStatus.PENDING, BatchStatus.IN_PROGRESS, BatchStatus.COMPLETED,
                     BatchStatus.FAILED, BatchStatus.SKIPPED, BatchStatus.REVERTED)
JOBS: dict[str, tuple[str, int, JobStatus, Gate | None, tuple[BatchStatus, ...]]] = {
    "queued": ("octo-org/widgets", 21, JobStatus.QUEUED, None, ()),
    "planning": ("octo-org/gadgets", 22, JobStatus.PLANNING, None, ()),
    "running": ("octo-org/widgets", 23, JobStatus.RUNNING, None, (C, IP, P)),
    "plan_gate": ("acme/api", 24, JobStatus.AWAITING_HUMAN, Gate.PLAN, (P, P)),
    "milestone_gate": ("octo-org/widgets", 25, JobStatus.AWAITING_HUMAN, Gate.MILESTONE, (C, C, P)),
    "failure_gate": ("octo-org/gadgets", 26, JobStatus.AWAITING_HUMAN, Gate.FAILURE, (C, F, P)),
    "cancel_requested": ("acme/api", 27, JobStatus.CANCEL_REQUESTED, None, (C, P)),
    "interrupted": ("acme/api", 28, JobStatus.INTERRUPTED, None, (C, P)),
    "completed": ("octo-org/widgets", 29, JobStatus.COMPLETED, None, (C, S, R)),
    "cancelled": ("octo-org/gadgets", 30, JobStatus.CANCELLED, None, (C, P)),
    "failed": ("acme/api", 31, JobStatus.FAILED, None, (P,)),
    "human_gate": ("octo-org/widgets", 32, JobStatus.AWAITING_HUMAN, Gate.HUMAN_COMMIT, (C, P)),
}
TITLES = {
    "queued": "Replace print() with the module logger",
    "planning": "Move file paths to pathlib",
    "running": "Replace old_sum() with new_sum()",
    "plan_gate": "Drop the Python 3.8 compatibility shims",
    "milestone_gate": "Turn unittest asserts into plain asserts",
    "failure_gate": EVIL_TITLE,  # issue titles are untrusted: the pages escape them
    "cancel_requested": "Rename the cfg module to config",
    "interrupted": "Add type hints to the public API",
    "completed": "Replace the deprecated datetime.utcnow()",
    "cancelled": "Sort imports with ruff",
    "failed": "Upgrade %-formatting to f-strings",
    "human_gate": "Replace os.path.join() with pathlib",
}
GROUPS = {
    "running": {"queued", "planning", "running", "cancel_requested", "interrupted"},
    "waiting": {"plan_gate", "milestone_gate"},
    "needs_human": {"failure_gate", "human_gate"},
    "failed": {"failed"}, "completed": {"completed"}, "cancelled": {"cancelled"},
}


def build(name: str, index: int) -> Job:
    repo, number, status, kind, statuses = JOBS[name]
    at = START + timedelta(minutes=10 * index)
    job = make_job(number=number, status=status, batches=batches(*statuses, at=at))
    job.repo, job.created_at, job.updated_at = repo, at, at + timedelta(minutes=5)
    job.title = TITLES[name]
    job.events = [Event(at=at, kind="plan", message=f"{len(statuses)} batches planned")]
    if kind is Gate.FAILURE:
        job.gate = gate(kind, at, batch=2, report=FAILED_VALIDATION)
        job.events.append(Event(at=at, kind="attempt", batch=2,
                                message="batch 2 attempt 2 failed: validation_failed"))
    elif kind is Gate.MILESTONE:
        job.gate = gate(kind, at, milestone=1)
    elif kind is not None:
        job.gate = gate(kind, at)
    if name in ("milestone_gate", "failure_gate", "completed"):
        job.server.pull = pull(40 + number, repo)
    if name == "completed":
        job.final_review = FinalReview(merged_with_base="5" * 40, ok=True,
                                       commands=[run(VALIDATE, 0, "6 passed", 3.0)])
    if name == "failed":
        job.error = ErrorInfo(code="repository_gone", retry_class=RetryClass.DO_NOT_RETRY,
                              message="the repository acme/api is gone",
                              hint="reinstall the App, then label the issue again")
    job.baseline, job.baseline_ok = [run(VALIDATE, 0, "6 passed", 2.0)], True
    return job


def seed(connection: redis.Redis) -> dict[str, Job]:
    connection.flushdb()
    store = RedisStore(connection)
    return {name: store.save(build(name, index)) for index, name in enumerate(JOBS)}


def settings(redis_url: str, **overrides: Any) -> Settings:
    options: dict[str, Any] = {"app_id": 1, "private_key": "not-used-by-the-web-app",
                               "webhook_secret": "webhook-secret", "redis_url": redis_url,
                               "dashboard_token": TOKEN, **overrides}
    return Settings(**options)


@pytest.fixture
def connection(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def seeded(connection: redis.Redis) -> dict[str, Job]:
    return seed(connection)


@pytest.fixture
def client(redis_url: str, connection: redis.Redis, seeded: dict[str, Job]) -> Iterator[TestClient]:
    """The app through ASGI, not logged in."""
    with TestClient(create_app(settings(redis_url), connection), follow_redirects=False) as tc:
        yield tc


@pytest.fixture
def logged_in(client: TestClient) -> TestClient:
    response = client.post("/login", data={"token": TOKEN, "next": "/jobs"})
    assert response.status_code == 303, response.text
    return client
