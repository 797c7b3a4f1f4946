"""`stepwise jobs` and `stepwise status` in server mode read the same Redis records."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from click.testing import Result
from typer.testing import CliRunner

from bot.cli.main import app
from bot.plumbing.redis_store import RedisStore
from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import GROUPS, JOBS

Invoke = Callable[..., Result]


@pytest.fixture
def cli(redis_url: str, seeded: dict[str, Job], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.chdir(tmp_path)  # `--repo owner/name` is not a directory here
    monkeypatch.delenv("STEPWISE_TASK_CENTER_URL", raising=False)
    runner = CliRunner()

    def invoke(*args: str, **env: str) -> Result:
        return runner.invoke(app, list(args), env={"STEPWISE_REDIS_URL": redis_url,
                                                   "COLUMNS": "250", **env})
    return invoke


def listed(output: str, jobs: dict[str, Job]) -> list[str]:
    found = [(output.index(job.id), name) for name, job in jobs.items() if job.id in output]
    return [name for _, name in sorted(found)]


def test_jobs_lists_every_job_newest_first(cli: Invoke, seeded: dict[str, Job]) -> None:
    result = cli("jobs")
    assert result.exit_code == 0, result.output
    assert listed(result.output, seeded) == list(reversed(JOBS))
    assert "12 jobs match" in result.output
    assert "Needs a human" in result.output and "failure (batch 2)" in result.output


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_jobs_filters_by_status_group(cli: Invoke, seeded: dict[str, Job], group: str) -> None:
    result = cli("jobs", "--status", group)
    assert result.exit_code == 0, result.output
    assert set(listed(result.output, seeded)) == GROUPS[group]


def test_jobs_filters_by_repository_and_refuses_an_unknown_status(
        cli: Invoke, seeded: dict[str, Job]) -> None:
    result = cli("jobs", "--repo", "acme/api", "--status", "waiting")
    assert listed(result.output, seeded) == ["plan_gate"]
    limited = cli("jobs", "--limit", "3")
    assert len(listed(limited.output, seeded)) == 3 and "the newest 3 are shown" in limited.output
    bad = cli("jobs", "--status", "bogus")
    assert bad.exit_code == 2 and "needs_human" in bad.output


def test_titles_are_printed_as_text(cli: Invoke, seeded: dict[str, Job],
                                    connection: redis.Redis) -> None:
    store = RedisStore(connection)
    job = store.load_id(seeded["queued"].id)
    assert job is not None
    job.title = "Fix [red]everything[/red]"
    store.save(job)
    assert "Fix [red]everything[/red]" in cli("jobs", "--status", "queued").output


@pytest.mark.parametrize(("name", "code"), [
    ("failure_gate", 4), ("plan_gate", 3), ("milestone_gate", 3), ("human_gate", 4),
    ("running", 0), ("queued", 0), ("completed", 0), ("cancelled", 5), ("failed", 1)])
def test_status_in_server_mode_exits_with_the_jobs_code(
        cli: Invoke, seeded: dict[str, Job], name: str, code: int) -> None:
    job = seeded[name]
    result = cli("status", "--server", "--repo", job.repo, "--number", str(job.number))
    assert result.exit_code == code, result.output
    assert f"Stepwise #{job.number}" in result.output


def test_status_prints_the_gate_and_detects_server_mode(cli: Invoke,
                                                        seeded: dict[str, Job]) -> None:
    job = seeded["failure_gate"]
    result = cli("status", "--repo", job.repo, "--number", str(job.number),
                 STEPWISE_TASK_CENTER_URL="https://stepwise.example.org/")
    assert result.exit_code == 4, result.output
    assert "Waiting at gate failure" in result.output and "/stepwise skip" in result.output
    assert f"https://stepwise.example.org/jobs/{job.id}" in result.output


def test_status_names_what_is_wrong(cli: Invoke, redis_url: str) -> None:
    missing = cli("status", "--server", "--repo", "octo-org/widgets", "--number", "999")
    assert missing.exit_code == 2 and "no Stepwise job for octo-org/widgets#999" in missing.output
    not_a_name = cli("status", "--server", "--repo", "not a repo", "--number", "1")
    assert not_a_name.exit_code == 2 and "owner/name" in not_a_name.output
    down = cli("jobs", STEPWISE_REDIS_URL="redis://127.0.0.1:1/0")
    assert down.exit_code == 1 and "cannot reach Redis" in down.output
