"""Deliveries across a web restart with two web processes (issue 45 item 8), as Compose runs
them: two real `stepwise serve` on one real redis-server behind the real HAProxy with the
repository's own deploy/haproxy/haproxy.cfg (the addresses from the environment, as
docker-compose.yml gives them), a real `stepwise worker`, and the fake GitHub delivering to the
balancer. While web-1 restarts, GitHub keeps delivering: every delivery is answered 202 within
GitHub's 10 s (web-2 answers what web-1 cannot), none has to be redelivered, and each acts
once: the approve sent while web-1 was down starts the job, every `status` gets one reply."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from bot.plumbing.redis_store import RedisStore
from jobs.kernel.model import Gate
from tests.kit.chaos.killing import wait_past_second_of
from tests.kit.chaos.settings import MAINTAINER, SHORT
from tests.kit.github import FakeGitHub
from tests.kit.github_hooks import HookDelivery
from tests.kit.github_model import FakeRepo
from tests.kit.maintainer import comment_event, maintained_repo, wait_job
from tests.kit.redis_server import free_port, running_redis
from tests.kit.stepwise_procs import (
    SECRET,
    app_env,
    stepwise_serve,
    stepwise_worker,
    stop,
    wait_answering,
)
from tests.kit.webhooks import make_event

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
STATUS_EVERY_S = 0.15


@contextlib.contextmanager
def balancer(bind: int, web_ports: tuple[int, int], log: Path) -> Iterator[str]:
    """HAProxy with deploy/haproxy/haproxy.cfg, given its addresses as docker-compose.yml
    does; yields its URL once it answers /healthz through a web process."""
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    env = {**os.environ, "STEPWISE_PROXY_BIND": f"127.0.0.1:{bind}",
           "STEPWISE_WEB_1": f"127.0.0.1:{web_ports[0]}",
           "STEPWISE_WEB_2": f"127.0.0.1:{web_ports[1]}"}
    with log.open("wb") as out:
        process = subprocess.Popen([haproxy, "-db", "-f", str(CONFIG)], env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{bind}"
    try:
        wait_answering(url, process, log, "haproxy", ok=lambda r: r.status_code == 200,
                       timeout=30)
        yield url
    finally:
        stop(process)


def in_rotation(proxy: str, proxy_log: Path, server: str) -> None:
    """Until the balancer sends requests to `server` (its health check, every `inter` 2 s, saw
    it answer): /healthz through the balancer, round robin, until one went to it. A process
    started after the balancer is out of rotation until then, and stopping it sooner tests
    nothing (no delivery goes to it, none is redispatched)."""
    deadline = time.monotonic() + 30
    while f" webhooks web/{server} " not in proxy_log.read_text():
        assert time.monotonic() < deadline, proxy_log.read_text()
        httpx.get(f"{proxy}/healthz", timeout=5)
        time.sleep(0.1)


def comment(gh: FakeGitHub, repo: FakeRepo, body: str) -> tuple[int, HookDelivery]:
    """A maintainer's comment and GitHub's delivery of it: (the comment's id, the delivery)."""
    posted = gh.add_comment(repo, 1, body, user=MAINTAINER)
    return posted.id, gh.hooks.send("issue_comment", comment_event(repo, posted))


def refuses(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
    except httpx.ConnectError:
        return True
    return False


def test_a_delivery_during_one_web_process_restart_is_answered_by_the_other(
        tmp_path: Path) -> None:
    with running_redis() as url, FakeGitHub(root=tmp_path / "github") as gh:
        env = app_env(url, tmp_path / "work", gh, **SHORT)
        store = RedisStore(redis.Redis.from_url(url))
        repo = maintained_repo(gh, "replicas", require_plan_approval=True)
        web_1, web_2 = free_port(), free_port()
        worker_log, proxy_log = tmp_path / "worker.log", tmp_path / "haproxy.log"
        worker = stepwise_worker(env, worker_log)
        first = contextlib.ExitStack()
        try:
            with stepwise_serve(env, tmp_path / "web-2.log", port=web_2), \
                    balancer(free_port(), (web_1, web_2), proxy_log) as proxy:
                first.enter_context(stepwise_serve(env, tmp_path / "web-1.log", port=web_1))
                in_rotation(proxy, proxy_log, "web-1")
                gh.hooks.target, gh.hooks.secret = proxy, SECRET
                labeled = gh.hooks.send("issues", make_event(
                    "issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                    label="stepwise"))
                assert labeled.status_code == 202
                job = wait_job(store, repo, lambda j: j.gate is not None and
                               j.gate.kind is Gate.PLAN, "plan gate", worker_log)
                assert job.gate is not None
                wait_past_second_of(job.gate.opened_at)

                # GitHub keeps delivering `status` commands while web-1 restarts.
                statuses: list[tuple[int, HookDelivery]] = []
                done = threading.Event()

                def keep_delivering() -> None:
                    while not done.is_set():
                        statuses.append(comment(gh, repo, "/stepwise status"))
                        done.wait(STATUS_EVERY_S)

                sender = threading.Thread(target=keep_delivering, daemon=True)
                sender.start()
                while len(statuses) < 3:
                    time.sleep(0.05)
                first.close()  # SIGTERM: web-1 stops (its in-flight requests answered)
                assert refuses(web_1)
                _, approve = comment(gh, repo, "/stepwise approve")
                while len(statuses) < 12:  # more deliveries while web-1 is down
                    time.sleep(0.05)
                assert refuses(web_1)
                first.enter_context(stepwise_serve(env, tmp_path / "web-1-again.log",
                                                   port=web_1))
                started = len(statuses)

                def back_in_rotation() -> bool:
                    """web-1 answers deliveries again (once the balancer's next health check
                    saw it: up to `inter` 2 s after it listens)."""
                    later = (tmp_path / "web-1-again.log").read_text()
                    return any(d.guid in later for _, d in statuses[started:])

                deadline = time.monotonic() + 30
                while len(statuses) < started + 8 or not back_in_rotation():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
                done.set()
                sender.join(timeout=30)

                answered = [labeled, approve, *(d for _, d in statuses)]
                assert [(d.guid, d.status_code) for d in answered if d.status_code != 202] == []
                assert all(d.duration < 10 for d in answered)  # GitHub's limit
                # web-2 answered the approve; web-1 (down) saw none of it.
                assert approve.guid in (tmp_path / "web-2.log").read_text()
                assert approve.guid not in (tmp_path / "web-1.log").read_text()
                # Deliveries the balancer sent to web-1 while it stopped (before its health
                # check saw it) were sent again to web-2 (HAProxy logs the redispatch as `+N`).
                redispatched = re.findall(r" webhooks web/web-2 \S+ 202 .* \d+/\d+/\d+/\d+/\+\d ",
                                          proxy_log.read_text())
                assert redispatched, proxy_log.read_text()
                # Both processes answered deliveries, before and after the restart.
                later = (tmp_path / "web-1-again.log").read_text()
                assert any(d.guid in later for _, d in statuses[started:]), proxy_log.read_text()
                job = wait_job(store, repo, lambda j: j.gate is None or j.gate.kind
                               is not Gate.PLAN, "the approve started the job", worker_log)

                def replies() -> list[int]:
                    """How many answers each `status` got (the answer's marker names it)."""
                    bodies = [c.body for c in gh.comments_on(repo, 1) if c.user != MAINTAINER]
                    return [sum(f":reply:{ident} -->" in body for body in bodies)
                            for ident, _ in statuses]

                deadline = time.monotonic() + 90
                while 0 in replies() and time.monotonic() < deadline:
                    time.sleep(0.3)
                assert replies() == [1] * len(statuses)  # each acted on once
                assert [d.guid for d in gh.hooks.deliveries if d.redelivery] == []
        finally:
            first.close()
            stop(worker)
