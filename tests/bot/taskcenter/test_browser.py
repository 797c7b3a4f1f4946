"""The task center in real Chromium (Debian's, driven by Playwright) on loopback: log in, filter
to "needs a human", open a job, follow a batch deep link, screenshot; the page refreshes itself
only while its job is active.

STEPWISE_UPDATE_SCREENSHOT=1 also copies the screenshot of the list to docs/taskcenter.png (the
README's).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.plumbing.redis_store import RedisStore
from bot.taskcenter import views
from bot.web.app import create_app
from jobs.kernel.job import Job
from tests.bot.conftest import served
from tests.bot.taskcenter.conftest import TOKEN, settings

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
pytestmark = [pytest.mark.browser, pytest.mark.integration]
DOCS_SHOT = Path(__file__).resolve().parents[3] / "docs" / "taskcenter.png"

try:
    from playwright.sync_api import Browser, expect, sync_playwright
except ImportError:  # the dev extra installs it; CI must have it
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("playwright is not installed (pip install -e '.[dev]')", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        message = "chromium is not installed (./scripts/test installs it with apt-get)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def site(redis_url: str, connection: redis.Redis, seeded: dict[str, Job]) -> Iterator[str]:
    with served(create_app(settings(redis_url), connection)) as url:
        yield url


def test_log_in_filter_open_a_job_and_follow_a_batch_link(browser: Browser, site: str,
                                                          seeded: dict[str, Job],
                                                          tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{site}/jobs")
    assert "/login" in page.url  # nothing without the token
    page.fill("#token", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(f"{site}/jobs")
    assert page.locator("table.jobs tbody tr").count() == len(seeded)
    every_job = tmp_path / "jobs.png"
    page.screenshot(path=str(every_job))

    page.click("nav.tabs >> text=Needs a human")
    page.wait_for_url("**/jobs?status=needs_human")
    rows = page.locator("table.jobs tbody tr")
    assert rows.count() == 2
    job = seeded["failure_gate"]
    assert page.locator(f'tr[data-job="{job.id}"] td.title').inner_text() == job.title  # escaped
    page.screenshot(path=str(tmp_path / "needs-a-human.png"), full_page=True)

    page.click(f'tr[data-job="{job.id}"] td.title a')
    page.wait_for_url(f"{site}/jobs/{job.id}")
    # A replace batch fails the same way again: the gate recommends skip (issue 26).
    assert page.locator("pre.comment").inner_text() == "/stepwise skip <reason>"
    page.click("#gate >> text=batch 2")
    page.wait_for_url(f"{site}/jobs/{job.id}#batch-2")
    target = page.locator("article:target")
    assert target.get_attribute("id") == "batch-2" and target.is_visible()
    assert target.locator("details.attempt[open]").count() == 1  # the last failed attempt
    shot = tmp_path / "batch-2.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000 and every_job.stat().st_size > 10_000
    if os.environ.get("STEPWISE_UPDATE_SCREENSHOT") == "1":
        shutil.copyfile(every_job, DOCS_SHOT)

    # A deep link opened directly lands on the batch, its milestone unfolded.
    page.goto(f"{site}/jobs/{job.id}#batch-3")
    assert page.locator("#batch-3").is_visible()
    assert page.evaluate("document.querySelector('#batch-3').closest('details').open")
    page.close()


def test_an_active_job_page_refreshes_itself_only_while_visible(
        browser: Browser, site: str, seeded: dict[str, Job], connection: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "REFRESH_S", dict.fromkeys(views.REFRESH_S, 1))  # quick polls
    context = browser.new_context(
        extra_http_headers={"Authorization": f"Bearer {TOKEN}"})
    page = context.new_page()
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url)
            if "/api/jobs/" in request.url else None)
    page.goto(f"{site}/jobs/{seeded['completed'].id}")
    page.wait_for_timeout(2500)
    assert polls == []  # a finished job's page never asks

    running = seeded["running"]
    page.goto(f"{site}/jobs/{running.id}")
    page.evaluate("Object.defineProperty(document, 'visibilityState', "
                  "{configurable: true, get: () => 'hidden'})")
    polls.clear()
    page.wait_for_timeout(2500)
    assert polls == []  # a hidden tab does not ask either
    page.evaluate("Object.defineProperty(document, 'visibilityState', "
                  "{configurable: true, get: () => 'visible'}); "
                  "document.dispatchEvent(new Event('visibilitychange'))")
    page.wait_for_timeout(500)
    assert polls  # visible again: it asks (and the answer is 304, nothing changed)
    assert page.locator("body").get_attribute("data-version") == str(running.version)
    store = RedisStore(connection)  # the worker records a step...
    job = store.load_id(running.id)
    assert job is not None
    job.batch(2).attempts[0].edit_summary = "a fresh step"
    store.save(job)
    expect(page.locator("body")).to_have_attribute(
        "data-version", str(job.version), timeout=5000)
    assert "a fresh step" in page.content()  # ...and the open page shows it without a click
    context.close()
