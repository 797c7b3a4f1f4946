"""GitHub call and rate-limit metrics in /metrics, counted at the githubkit client (every answer
and retry of every client the App makes) and kept in Redis, so the web app's scrape shows the
workers' calls. A job runs against the fake GitHub: the counts by method, route template and
status class are the fake's own log of what it answered; a retried 502 counts a retry, a 304 a
conditional hit, and a primary rate limit shows in the gauges and the wait counters."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
import redis
from prometheus_client import CollectorRegistry, generate_latest

from bot.github.app import GitHubApp
from bot.github.errors import CallRetry, ForgeError
from bot.github.observer import route_template
from bot.observability.github_metrics import GitHubCallMetrics
from bot.server import steps
from bot.taskcenter.records import HeadCache
from bot.web.metrics_route import RedisCollector
from tests.bot.conftest import REPO, open_world
from tests.bot.server.test_reliability import FAST, REPO_READ, approved
from tests.bot.taskcenter.test_metrics import Samples, parse, scrape, value
from tests.kit.github_auth import shared_app_key
from tests.kit.redis_server import free_port

CALLS = "stepwise_github_calls_total"


def counted_calls(samples: Samples) -> Counter[tuple[str, str, str]]:
    found: Counter[tuple[str, str, str]] = Counter()
    for (name, labels), count in samples.items():
        if name == CALLS:
            named = dict(labels)
            found[(named["method"], named["route"], named["status"])] = int(count)
    return found


@pytest.mark.parametrize(("path", "template"), [
    ("/repos/octo-org/widgets/issues/7/comments", "/repos/{owner}/{repo}/issues/{number}/comments"),
    ("/api/v3/repos/o/r/pulls/12/requested_reviewers",
     "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers"),
    ("/repos/o/r/issues/comments/991/reactions", "/repos/{owner}/{repo}/issues/comments/{id}/reactions"),
    ("/repos/o/r/contents/docs/a b/c.md", "/repos/{owner}/{repo}/contents/{path}"),
    ("/repos/o/r/git/refs/heads/stepwise/issue-7", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("/repos/o/r/branches/feature/x/protection/required_signatures",
     "/repos/{owner}/{repo}/branches/{branch}/protection/required_signatures"),
    ("/repos/o/r/commits/" + "a" * 40 + "/check-runs", "/repos/{owner}/{repo}/commits/{sha}/check-runs"),
    ("/app/installations/42/access_tokens", "/app/installations/{id}/access_tokens"),
    ("/orgs/acme/teams/core/memberships/maria", "/orgs/{org}/teams/{name}/memberships/{name}"),
    ("/api/graphql", "/graphql"),
    ("/repos/issues/issues/issues/1", "/repos/{owner}/{repo}/issues/{number}"),
])
def test_route_templates_keep_githubs_words_and_hide_every_value(path: str, template: str) -> None:
    assert route_template(path) == template


def test_a_jobs_calls_retries_and_rate_limits_show_in_metrics(tmp_path: Path,
                                                              redis_url: str) -> None:
    with open_world(tmp_path, redis_url, call_backoff_s=FAST) as world:
        approved(world)  # labelled, plan approved, the first batch's step queued
        world.gh.fail("GET", REPO_READ, 502, times=1)  # retried in place, then answered
        world.work()
        client = world.ctx.installation(world.job().server.installation())
        owner, name = REPO.split("/")
        assert client.comments(owner, name, 1) == client.comments(owner, name, 1)  # 2nd: a 304
        log = [r for r in world.gh.requests if r.status]
        samples = scrape(world.url)
        expected = Counter((r.method, route_template(r.path), f"{r.status // 100}xx") for r in log)
        assert counted_calls(samples) == expected  # every answer counted once, as the fake saw it
        assert expected[("POST", "/app/installations/{id}/access_tokens", "2xx")] >= 1
        assert expected[("POST", "/repos/{owner}/{repo}/issues/{number}/comments", "2xx")] >= 1
        assert expected[("GET", "/repos/{owner}/{repo}", "5xx")] == 1
        assert value(samples, "stepwise_github_retries_total", method="GET",
                     route="/repos/{owner}/{repo}") == 1
        comments = "/repos/{owner}/{repo}/issues/{number}/comments"
        not_modified = sum(1 for r in log if r.status == 304)
        assert expected[("GET", comments, "3xx")] >= 1  # the second listing, at least
        assert sum(n for (metric, _), n in samples.items()
                   if metric == "stepwise_github_conditional_hits_total") == not_modified
        assert value(samples, "stepwise_github_conditional_hits_total", route=comments) >= 1
        installation = str(world.job().server.installation_id)
        assert value(samples, "stepwise_github_rate_limit_remaining", installation=installation,
                     resource="core") == 4999
        assert value(samples, "stepwise_github_rate_limit_remaining", installation="app",
                     resource="core") == 4999  # the App's own calls (token mints)
        # A primary rate limit: the answer's headers become the installation's gauges.
        world.gh.fail_primary_rate_limit("GET", REPO_READ, reset_in=1800)
        world.comment("/stepwise approve", by="maria")  # the milestone gate: the next step
        world.work()
        assert world.job().server.rate_limited_until is not None
        last = [r for r in world.gh.requests if r.status][-1]
        assert (last.method, last.path, last.status) == ("GET", f"/repos/{REPO}", 403)
        samples = scrape(world.url)
        labels = {"installation": installation, "resource": "core"}
        assert value(samples, "stepwise_github_rate_limit_remaining", **labels) == 0
        assert value(samples, "stepwise_github_rate_limit_limit", **labels) == 5000
        reset = value(samples, "stepwise_github_rate_limit_reset_timestamp_seconds", **labels)
        assert abs(reset - (time.time() + 1800)) < 60
        assert value(samples, "stepwise_github_rate_limited_total", kind="primary") == 1
        assert value(samples, "stepwise_github_rate_limit_waits_total", kind="primary") == 1
        assert value(samples, "stepwise_github_rate_limited_total", kind="secondary") == 0
        # A secondary limit without Retry-After is counted as such, and as a wait.
        world.gh.fail_secondary_rate_limit("GET", REPO_READ, retry_after=None)
        # the primary limit's reset has come (bot/github/limited.py held every request till then)
        world.redis.delete(*world.redis.keys("stepwise:github-limited:*"))
        steps.step_task(world.ctx, {"job_id": world.job().id})  # what the scheduler runs then
        samples = scrape(world.url)
        assert value(samples, "stepwise_github_rate_limited_total", kind="secondary") == 1
        assert value(samples, "stepwise_github_rate_limit_waits_total", kind="secondary") == 1
        log = [r for r in world.gh.requests if r.status]
        assert sum(counted_calls(samples).values()) == len(log)


def test_a_call_that_gets_no_answer_counts_as_an_error_and_its_retry_as_a_retry(
        redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens there: the connection is refused
    app = GitHubApp(app_id=1, private_key=shared_app_key()[0], base_url=nobody,
                    retry=CallRetry(backoff_s=(0.01,)), observer=GitHubCallMetrics(connection))
    with pytest.raises(ForgeError):
        app.installation_id("octo-org", "widgets")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RedisCollector(connection, HeadCache()))
    samples = parse(generate_latest(registry).decode())
    route = "/repos/{owner}/{repo}/installation"
    assert counted_calls(samples) == Counter({("GET", route, "error"): 2})  # the try and its retry
    assert value(samples, "stepwise_github_retries_total", method="GET", route=route) == 1
    connection.flushdb()
