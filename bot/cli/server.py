"""`stepwise serve` (the web app under uvicorn) and `stepwise worker` (an RQ worker with the
reaper): server mode's processes; their modules are imported only when they start."""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Annotated, Any

import typer

from bot.cli.output import guarded
from bot.observability.logs import setup_logging, uvicorn_log_config


def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (STEPWISE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (STEPWISE_PORT).")] = None,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Web processes (one core "
                                         "acknowledges a few hundred deliveries a second).")] = 1,
) -> None:
    """Run the web app (webhooks, health) with uvicorn."""
    def action() -> None:
        import redis
        import uvicorn

        from bot.plumbing.connections import warn_unless_noeviction, web_redis
        from bot.settings import load_settings
        from bot.web.app import create_app

        settings = load_settings("web")  # the web app never needs the App's key
        setup_logging(settings)
        log_start("web", settings)
        with contextlib.suppress(redis.RedisError):  # /healthz reports a Redis that is down
            warn_unless_noeviction(web_redis(settings))
        target: Any = create_app(settings)
        if workers > 1:  # each process builds its own app from the same environment
            target = "bot.web.app:create_app"
        uvicorn.run(target, host=host or settings.host, port=port or settings.port,
                    workers=workers, factory=workers > 1, log_level="info",
                    log_config=uvicorn_log_config(json_lines=settings.log_format == "json"))
    guarded(action)


def worker(
    burst: Annotated[bool, typer.Option("--burst", help="Stop when the queue is empty.")] = False,
    worker_class: Annotated[str | None, typer.Option(
        "--worker-class", envvar="STEPWISE_WORKER_CLASS",
        help="RQ's worker class: rq.worker.SimpleWorker (default: each step in this process) "
        "or rq.worker.Worker (a forked work horse per step).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Health probe: exit 0 when a worker "
                                        "of this host is registered and alive, else 1.")] = False,
) -> None:
    """Run an RQ worker on the `stepwise` queue (scheduler included)."""
    if check:
        probe_worker()
        return

    def action() -> None:
        import redis

        from bot.log_context import with_log_context
        from bot.plumbing.connections import dequeue_redis, warn_unless_noeviction, worker_redis
        from bot.server.context import ServerContext
        from bot.server.handlers import handlers
        from bot.server.heartbeat import Heartbeat
        from bot.server.reaper import reap, run_reaper
        from bot.server.recovery import recover_jobs
        from bot.server.worker import (
            RECONNECT_BACKOFF_S,
            install_handlers,
            run_worker,
            wait_for_redis,
        )
        from bot.server.worker import worker_class as rq_worker_class
        from bot.settings import load_settings

        chosen = rq_worker_class(worker_class)  # a wrong name fails before anything starts
        settings = load_settings("worker")  # workers never need the webhook secret
        setup_logging(settings, capture_stderr=True)  # RQ's scheduler's tracebacks too
        log_start("worker", settings)
        stop = threading.Event()
        if not wait_for_redis(lambda: worker_redis(settings), RECONNECT_BACKOFF_S, stop):
            return  # asked to stop before Redis ever answered
        context = ServerContext.from_settings(settings)
        warn_unless_noeviction(context.redis)
        install_handlers(with_log_context(handlers(context)))  # job_id, repo, ... on each line
        context.warm_up()  # imports and clients every forked work horse would build again
        heartbeat = Heartbeat(context.redis, recover=lambda: recover_jobs(context))
        with contextlib.suppress(redis.RedisError):  # counted at once (else at the next beat)
            heartbeat.tick()
        threading.Thread(target=heartbeat.run, args=(stop,), daemon=True,
                         name="heartbeat").start()
        reap(context)  # recover jobs whose worker died, then keep looking in a thread
        threading.Thread(target=run_reaper, args=(context, stop), daemon=True,
                         name="reaper").start()
        try:
            run_worker(lambda: dequeue_redis(settings), burst=burst, worker_class=chosen,
                       dequeue_timeout_s=settings.dequeue_timeout_s, stop=stop,
                       heartbeat=heartbeat)
        finally:
            stop.set()
    guarded(action)


def log_start(role: str, settings: Any) -> None:
    """One line naming the version that starts, so an upgrade shows in the logs."""
    from bot.observability.version import running_version

    logging.getLogger("bot.cli.server").info(
        "stepwise %s starting: %s", running_version(), role,
        extra={"version": running_version(), "role": role, "log_format": settings.log_format})


def probe_worker() -> None:
    """`stepwise worker --check`: one line, exit 0 (healthy) or 1 (bot/server/worker.py `check_worker`)."""
    from bot.plumbing.connections import worker_redis
    from bot.server.worker import check_worker
    from bot.settings import load_settings

    def action() -> None:
        healthy, why = check_worker(worker_redis(load_settings("worker")))
        typer.echo(why, err=not healthy)
        if not healthy:
            raise typer.Exit(1)
    guarded(action)
