"""The HTML pages through the ASGI app over a real Redis holding jobs in every status."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from jobs.kernel.job import Job
from tests.bot.taskcenter.conftest import EVIL_TITLE, GROUPS, JOBS, SHA2, SHA3, TAIL


def row_ids(html: str) -> list[str]:
    return re.findall(r'<tr class="group-[a-z_]+" data-job="([^"]+)"', html)


def ids(jobs: dict[str, Job], names: set[str] | list[str]) -> list[str]:
    return [jobs[name].id for name in names]


def test_the_list_shows_every_job_newest_first(logged_in: TestClient,
                                               seeded: dict[str, Job]) -> None:
    page = logged_in.get("/jobs")
    assert page.status_code == 200
    assert row_ids(page.text) == ids(seeded, list(reversed(JOBS)))
    assert "12 jobs" in page.text


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_each_status_filter_shows_exactly_its_jobs(logged_in: TestClient, seeded: dict[str, Job],
                                                   group: str) -> None:
    page = logged_in.get(f"/jobs?status={group}")
    assert sorted(row_ids(page.text)) == sorted(ids(seeded, GROUPS[group]))
    assert 'aria-current="page"' in page.text


def test_a_single_status_repository_and_text_filter(logged_in: TestClient,
                                                    seeded: dict[str, Job]) -> None:
    assert row_ids(logged_in.get("/jobs?status=interrupted").text) == ids(seeded, ["interrupted"])
    acme = row_ids(logged_in.get("/jobs?repo=acme/api").text)
    assert sorted(acme) == sorted(ids(seeded, ["plan_gate", "cancel_requested", "interrupted",
                                                "failed"]))
    both = logged_in.get("/jobs?repo=acme/api&status=waiting").text
    assert row_ids(both) == ids(seeded, ["plan_gate"])
    assert row_ids(logged_in.get("/jobs?q=tidy+IMPORTS").text) == ids(seeded, ["failure_gate"])
    assert row_ids(logged_in.get("/jobs?q=%2329").text) == ids(seeded, ["completed"])
    assert row_ids(logged_in.get("/jobs?q=nothing-like-this").text) == []
    lenient = logged_in.get("/jobs?status=bogus&page=x")
    assert lenient.status_code == 200 and "Unknown status" in lenient.text
    assert len(row_ids(lenient.text)) == len(JOBS)


def test_a_row_shows_what_the_record_says(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    html = logged_in.get("/jobs?status=needs_human").text
    job = seeded["failure_gate"]
    row = html[html.index(f'data-job="{job.id}"'):]
    row = row[:row.index("</tr>")]
    assert "octo-org/gadgets" in row and "#26" in row and "Needs a human" in row
    assert "<code>failure</code>" in row and f'href="/jobs/{job.id}#batch-2"' in row
    assert '<span class="done">1/3</span>' in row  # batch 1 completed; 2 failed; 3 pending
    assert 'href="https://github.com/octo-org/gadgets/issues/26"' in row
    assert 'href="https://github.com/octo-org/gadgets/pull/66"' in row and "PR #66" in row
    assert "<time datetime=" in row


def test_titles_are_escaped(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    for path in ("/jobs", f"/jobs/{seeded['failure_gate'].id}"):
        html = logged_in.get(path).text
        assert "<script>alert" not in html and EVIL_TITLE not in html
        assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt; Tidy &amp; &#34;quote&#34;" in html
        assert html.count("<script") == 1  # only the page's own script file


def test_the_job_page_is_a_timeline_with_evidence(logged_in: TestClient,
                                                  seeded: dict[str, Job]) -> None:
    job = seeded["failure_gate"]
    html = logged_in.get(f"/jobs/{job.id}").text
    # The gate and the exact comment to post, where.
    assert "Needs a human: gate <code>failure</code>" in html
    assert '<pre class="comment">/stepwise skip &lt;reason&gt;</pre>' in html
    assert 'post this comment on <a href="https://github.com/octo-org/gadgets/pull/66"' in html
    assert '<code class="command">/stepwise revert &lt;batch&gt;</code>' in html  # own line
    # Plan, milestones and each batch with an anchor, attempts, commands, exit codes, tails.
    assert 'id="plan"' in html and "<code>replace</code>" in html and "refactor unrelated code" in html
    assert 'id="milestone-1"' in html and 'id="milestone-2"' in html
    for number in (1, 2, 3):
        assert f'id="batch-{number}"' in html
    assert 'href="https://github.com/octo-org/gadgets/commit/' + "1" * 40 + '"' in html
    assert "Attempt 1: failed" in html and "Attempt 2: failed" in html
    assert '<td class="exit">1</td>' in html and "<code>python -m pytest -q</code>" in html
    assert "AssertionError: 9 != 10" in html and TAIL.splitlines()[1] in html
    # Errors with code, retry class and hint.
    assert "<code>validation_failed</code>" in html and "retry-needs_human" in html
    assert "Hint: read the output tail" in html
    assert "batch 2 attempt 2 failed: validation_failed" in html
    # It refreshes itself (a job waiting for a human can move on when someone comments).
    assert 'data-refresh-seconds="30"' in html and f'data-version="{job.version}"' in html


def test_finished_jobs_do_not_refresh_and_running_ones_do(logged_in: TestClient,
                                                          seeded: dict[str, Job]) -> None:
    completed = logged_in.get(f"/jobs/{seeded['completed'].id}").text
    assert 'data-refresh-seconds="0"' in completed
    assert "Final review" in completed and "passes" in completed
    assert "Reason: needs a manual import fix" in completed
    assert "Reverted by" in completed and '<span class="bstatus">reverted</span>' in completed
    assert f"/commit/{SHA3}" in completed and f"/commit/{SHA2}" not in completed  # 2 skipped
    assert 'data-refresh-seconds="5"' in logged_in.get(f"/jobs/{seeded['running'].id}").text
    failed = logged_in.get(f"/jobs/{seeded['failed'].id}").text
    assert "<code>repository_gone</code>" in failed and "retry-do_not_retry" in failed
    assert "Hint: reinstall the App" in failed


def test_an_unknown_job_is_404(logged_in: TestClient) -> None:
    response = logged_in.get("/jobs/nope-123")
    assert response.status_code == 404 and "No such job" in response.text


def test_the_list_pages_through_many_jobs(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    from bot.plumbing.redis_store import RedisStore
    from tests.bot.taskcenter.conftest import build

    store = RedisStore(logged_in.app.state.redis)  # type: ignore[attr-defined]
    for index in range(20):
        job = build("queued", 20 + index)
        job.id, job.number = f"{100 + index}-feedface0000", 100 + index
        store.save(job)
    first = logged_in.get("/jobs").text
    second = logged_in.get("/jobs?page=2").text
    assert len(row_ids(first)) == 25 and len(row_ids(second)) == 7
    assert "page 1 of 2" in first and 'href="/jobs?page=2"' in first
    assert not set(row_ids(first)) & set(row_ids(second))
    assert row_ids(first)[0] == "119-feedface0000"


def test_only_http_links_reach_a_page(logged_in: TestClient, seeded: dict[str, Job]) -> None:
    from bot.plumbing.redis_store import RedisStore

    store = RedisStore(logged_in.app.state.redis)  # type: ignore[attr-defined]
    job = store.load_id(seeded["milestone_gate"].id)
    assert job is not None
    assert job.server.pull is not None
    job.server.pull.url = "javascript:alert(1)"
    job.repo = 'octo-org/widgets"><script>'
    store.save(job)
    for path in ("/jobs", f"/jobs/{job.id}"):
        html = logged_in.get(path).text
        assert "javascript:" not in html and '"><script>' not in html


def test_github_enterprise_links() -> None:
    from bot.github.app import web_base
    from bot.taskcenter.links import Links

    assert web_base("https://api.github.com") == "https://github.com"
    assert web_base("https://ghe.example.com/api/v3") == "https://ghe.example.com"
    links = Links(web_base("https://ghe.example.com/api/v3/"), "https://tc.example.org/")
    assert links.issue("o/r", 3) == "https://ghe.example.com/o/r/issues/3"
    assert links.commit("o/r", "not-a-sha") is None
    assert links.job("7-abc", 2) == "https://tc.example.org/jobs/7-abc#batch-2"
