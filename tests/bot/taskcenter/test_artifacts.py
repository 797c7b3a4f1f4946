"""A failed attempt's output.log and attempt.diff in the task center: served behind the login,
as plain text, only for an attempt whose record lists them, never through a link; the job page
links them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from bot.plumbing.redis_store import RedisStore
from bot.taskcenter.artifacts import artifact_path
from bot.web.app import create_app
from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import TOKEN, seed, settings

LOG = "$ python -m pytest -q\nFAILED tests/test_total.py::test_total <script>x</script>\n[exit 1]\n"
DIFF = "--- a/calc/m2/a.py\n+++ b/calc/m2/a.py\n@@ -1 +1 @@\n-old_sum(1)\n+new_sum(1)\n"


@pytest.fixture
def kept(tmp_path: Path, connection: redis.Redis) -> tuple[Job, Path]:
    job = seed(connection)["failure_gate"]
    attempt = job.batch(2).attempts[-1]
    folder = f".git/stepwise/artifacts/issue-{job.number}/attempts/2-{attempt.number}"
    attempt.artifacts = [f"{folder}/output.log", f"{folder}/attempt.diff"]
    job = RedisStore(connection).save(job)
    for name, text in (("output.log", LOG), ("attempt.diff", DIFF)):
        path = artifact_path(tmp_path, job.repo, job.number, 2, attempt.number, name)
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return job, tmp_path


@pytest.fixture
def web(redis_url: str, connection: redis.Redis, kept: tuple[Job, Path]) -> Iterator[TestClient]:
    app = create_app(settings(redis_url, workdir=kept[1]), connection)
    with TestClient(app, follow_redirects=False) as client:
        yield client


def test_the_files_are_served_behind_the_login_as_plain_text(
        web: TestClient, kept: tuple[Job, Path]) -> None:
    job, workdir = kept
    attempt = job.batch(2).attempts[-1].number
    url = f"/jobs/{job.id}/attempts/2/{attempt}"
    assert web.get(f"{url}/output.log").status_code == 303  # to the login first
    assert web.post("/login", data={"token": TOKEN, "next": "/jobs"}).status_code == 303

    log = web.get(f"{url}/output.log")
    assert log.status_code == 200 and log.text == LOG
    assert log.headers["content-type"].startswith("text/plain")
    assert "default-src 'none'" in log.headers["content-security-policy"]
    assert web.get(f"{url}/attempt.diff").text == DIFF
    page = web.get(f"/jobs/{job.id}").text
    assert f'href="{url}/output.log"' in page and f'href="{url}/attempt.diff"' in page

    assert web.get(f"{url}/job.json").status_code == 404  # only the two names
    assert web.get(f"/jobs/{job.id}/attempts/2/1/output.log").status_code == 404  # none kept
    assert web.get(f"/jobs/{job.id}/attempts/1/1/output.log").status_code == 404
    # A link in the file's place is not followed.
    path = artifact_path(workdir, job.repo, job.number, 2, attempt, "output.log")
    assert path is not None
    path.unlink()
    (workdir / "secret.txt").write_text("not for the web")
    path.symlink_to(workdir / "secret.txt")
    refused = web.get(f"{url}/output.log")
    assert refused.status_code == 404 and "not for the web" not in refused.text
