"""The web app factory: routes only (webhooks, health, metrics, the task center); settings and
Redis are injected."""

from __future__ import annotations

import logging

import redis
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from bot.observability.version import running_version
from bot.plumbing.connections import web_redis
from bot.settings import Settings, load_settings
from bot.taskcenter.auth import ApiViewer, PageViewer
from bot.taskcenter.mount import install as install_task_center
from bot.web import metrics_route, webhooks
from bot.web.redis_deadline import HEALTH_THREADS, WEBHOOK_THREADS, RedisDeadlineExceeded, RedisLane
from bot.web.webhook_body import MAX_BUFFERED_BYTES, BodyBudget
from bot.web.webhooks import RETRY_AFTER_S
from jobs.composition import install

OPENAPI_PATH = "/openapi.json"

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, connection: redis.Redis | None = None) -> FastAPI:
    install()  # the task center reads stored specs and records
    settings = settings or load_settings("web")
    # The schema, like the UI, only behind the task center's login: /openapi.json below.
    app = FastAPI(title="Stepwise", version=running_version(), docs_url=None, redoc_url=None,
                  openapi_url=None,
                  description="Long maintenance jobs in small, validated, reversible steps.")
    app.state.webhook_secrets = settings.webhook_secrets()
    app.state.app_slug = settings.app_slug
    app.state.max_payload_bytes = webhooks.MAX_PAYLOAD_BYTES
    app.state.body_budget = BodyBudget(MAX_BUFFERED_BYTES)
    # Redis work runs on lanes with one deadline each: a hung Redis fails a request, it never
    # stalls the event loop, and /healthz never waits behind webhooks (bot/web/redis_deadline.py).
    app.state.redis = connection or web_redis(settings)
    deadline_s = settings.web_redis_deadline_s
    app.state.webhook_lane = RedisLane("webhook-redis", threads=WEBHOOK_THREADS,
                                       deadline_s=deadline_s)
    app.state.health_lane = RedisLane("health-redis", threads=HEALTH_THREADS,
                                      deadline_s=deadline_s)
    app.include_router(webhooks.router)
    app.include_router(metrics_route.router)
    install_task_center(app, settings)

    @app.get("/docs", include_in_schema=False)
    def docs(_: PageViewer) -> HTMLResponse:
        """The OpenAPI UI, behind the task center's login (off with the task center)."""
        return get_swagger_ui_html(openapi_url=OPENAPI_PATH, title="Stepwise API")

    @app.get(OPENAPI_PATH, include_in_schema=False)
    def openapi(_: ApiViewer) -> JSONResponse:
        """The OpenAPI schema, to whoever may open /docs (its session) or sends the token as
        a Bearer header; 401 otherwise, 404 with the task center off."""
        return JSONResponse(app.openapi())

    @app.exception_handler(redis.RedisError)
    async def redis_unavailable(request: Request, exc: redis.RedisError) -> JSONResponse:
        """The task center and the API without Redis: 503 with Retry-After, never a 500."""
        log.warning("Redis is unavailable: %s answered 503", request.url.path,
                    extra={"error": type(exc).__name__})
        return JSONResponse({"status": "unavailable", "error": "redis_unavailable",
                             "hint": "Redis does not answer; try again shortly"},
                            status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.get("/healthz")
    async def healthz(request: Request) -> JSONResponse:
        """Whether Redis answers within the deadline (503 when it does not), on a lane of its
        own: it never queues behind webhooks waiting for a hung Redis."""
        state = request.app.state
        try:
            await state.health_lane.run(state.redis.ping)
        except (redis.RedisError, RedisDeadlineExceeded) as exc:
            hung = isinstance(exc, RedisDeadlineExceeded | redis.TimeoutError)
            reason = "no answer" if hung else type(exc).__name__
            return JSONResponse({"status": "unhealthy", "redis": reason,
                                 "version": running_version()}, status_code=503)
        return JSONResponse({"status": "ok", "redis": "ok", "version": running_version()})

    return app
