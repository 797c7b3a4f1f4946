"""Deliveries across a web restart: GitHub (the fake, which sends and logs deliveries as GitHub
does) delivers a label while the real `stepwise serve` is down; a real `stepwise worker`'s
reconciler finds it failed in the App's delivery log and asks GitHub to redeliver it. Its first
ask comes while the web app is still down (as when a pass meets a web app that is starting:
under load this test used to fail that way, the second ask coming 10 minutes later), so that
redelivery fails too; the next pass asks again, the web app now answers, the job starts, and a
delivery that succeeded is never asked for again."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import redis

from bot.plumbing.redis_store import RedisStore
from bot.server.redeliveries import ask_again_after_s, failed_guids
from jobs.kernel.model import Gate
from tests.kit.chaos.settings import MAINTAINER, SHORT
from tests.kit.github import FakeGitHub
from tests.kit.github_hooks import HookDelivery
from tests.kit.maintainer import maintained_repo
from tests.kit.redis_server import free_port, running_redis
from tests.kit.stepwise_procs import SECRET, app_env, stepwise_serve, stepwise_worker, stop
from tests.kit.webhooks import make_event

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]


def test_a_delivery_still_failing_is_asked_again_at_the_next_pass_then_less_often() -> None:
    waits = [ask_again_after_s(asks, 20) for asks in range(1, 8)]
    assert waits == [19, 39, 79, 159, 319, 599, 599]  # one pass (20 s), then doubling to 10 min


def test_failed_guids_are_those_no_attempt_of_which_succeeded() -> None:
    from datetime import timedelta

    now = datetime.now(UTC)

    def item(ident: int, guid: str, code: int, age_s: float = 10) -> dict[str, object]:
        at = (now - timedelta(seconds=age_s)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"id": ident, "guid": guid, "status_code": code, "delivered_at": at}

    found = failed_guids([item(1, "a", 0), item(2, "a", 502, 5), item(3, "b", 503),
                          item(4, "b", 202, 1), item(5, "c", 200), item(6, "d", 0, 2 * 86400)],
                         now)
    assert found == {"a": 2}  # b succeeded later, c succeeded, d is too old


def test_a_delivery_still_waiting_for_its_answer_is_not_logged_as_failed(tmp_path: Path) -> None:
    """GitHub's delivery log lists an attempt once it has ended. A pass of the reconciler that
    lists the log while a delivery waits for the web app's answer (a slow answer, a loaded
    machine) finds nothing to ask again; once answered 202 the attempt is listed as succeeded.
    (The fake listed the waiting attempt as `failed to connect`, and the reconciler asked for a
    redelivery of a delivery about to succeed.)"""
    arrived, answer = threading.Event(), threading.Event()

    class SlowWebApp(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            arrived.set()
            answer.wait(30)
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return

    web = ThreadingHTTPServer(("127.0.0.1", 0), SlowWebApp)
    serving = threading.Thread(target=web.serve_forever, daemon=True)
    serving.start()
    try:
        with FakeGitHub(root=tmp_path / "github") as gh:
            gh.hooks.target = f"http://127.0.0.1:{web.server_address[1]}"
            app = gh.client(None)  # as the App, as the reconciler lists the log
            sent: list[HookDelivery] = []
            sending = threading.Thread(target=lambda: sent.append(gh.hooks.send(
                "ping", {"zen": "Keep it logically awesome."})))
            sending.start()
            assert arrived.wait(30)
            waiting = app.rest.apps.list_webhook_deliveries(per_page=100).json()
            assert waiting == [] and failed_guids(waiting, datetime.now(UTC)) == {}
            answer.set()
            sending.join(30)
            listed = app.rest.apps.list_webhook_deliveries(per_page=100).json()
            assert [(d["guid"], d["status_code"]) for d in listed] == [(sent[0].guid, 202)]
            assert failed_guids(listed, datetime.now(UTC)) == {}
    finally:
        answer.set()
        web.shutdown()
        web.server_close()


def test_deliveries_refused_during_a_web_restart_are_redelivered(tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh, **SHORT)
        store = RedisStore(redis.Redis.from_url(url))
        repo = maintained_repo(gh, "restarted", require_plan_approval=True)
        port = free_port()
        gh.hooks.target, gh.hooks.secret = f"http://127.0.0.1:{port}", SECRET
        worker = stepwise_worker(env, tmp_path / "worker.log")
        try:
            # The web app is down (restarting): GitHub's delivery fails to connect.
            labeled = gh.hooks.send("issues", make_event(
                "issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                label="stepwise"))
            assert labeled.status_code == 0

            def attempts() -> list[HookDelivery]:
                return [d for d in gh.hooks.deliveries if d.guid == labeled.guid]

            deadline = time.monotonic() + 60
            while not [d for d in attempts() if d.redelivery]:  # refused: nothing listens
                assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
                time.sleep(0.2)
            assert [(d.redelivery, d.status_code) for d in attempts()] == [(False, 0), (True, 0)]
            with stepwise_serve(env, tmp_path / "web.log", port=port):
                deadline = time.monotonic() + 90
                job = None
                while time.monotonic() < deadline:
                    job = store.find(repo.full_name, 1)
                    if job is not None and job.gate is not None:
                        break
                    time.sleep(0.5)
                assert job is not None and job.gate is not None and job.gate.kind is Gate.PLAN, \
                    (tmp_path / "worker.log").read_text()[-3000:]
                made = attempts()
                assert [d.redelivery for d in made] == [False] + [True] * (len(made) - 1)
                assert [d.status_code for d in made[:-1]] == [0] * (len(made) - 1)
                assert made[-1].status_code == 202 and len(made) >= 3
                # Two more passes list the log (waited for, not slept: a loaded machine makes
                # fewer passes in a given time); one that succeeded is not asked again.
                asks = len(gh.requests_to("POST", r"^/app/hook/deliveries/\d+/attempts$"))
                listings = len(gh.requests_to("GET", r"^/app/hook/deliveries$"))
                deadline = time.monotonic() + 60
                while len(gh.requests_to("GET", r"^/app/hook/deliveries$")) < listings + 2:
                    assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
                    time.sleep(0.2)
                assert len(gh.requests_to("POST", r"^/app/hook/deliveries/\d+/attempts$")) == asks
                assert len(attempts()) == len(made)
        finally:
            stop(worker)
