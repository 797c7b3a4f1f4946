"""Adds the task center to the web app: its routers, static files and the login redirect. A
feature's pages (the campaigns') are its router, imported and included here."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from bot.settings import Settings
from bot.taskcenter import api, artifacts, pages
from bot.taskcenter.auth import LoginRequired, TaskCenterOff, login_url
from bot.taskcenter.campaign_pages import router as campaigns_router
from bot.taskcenter.login_guard import LoginLimiter, check_token_strength
from bot.taskcenter.records import HeadCache

STATIC = Path(__file__).parent / "static"


def install(app: FastAPI, settings: Settings) -> None:
    """Add the task center's routes, static files and error pages to the web app."""
    app.state.settings = settings
    app.state.head_cache = HeadCache()
    token = settings.dashboard_token.get_secret_value() if settings.dashboard_token else ""
    if token:
        check_token_strength(token)  # refuses to start with a weak token, naming the fix
    app.state.login_limiter = LoginLimiter()
    app.include_router(pages.router)
    app.include_router(campaigns_router)  # the campaigns feature's pages
    app.include_router(artifacts.router)
    app.include_router(api.router)
    app.mount("/static/taskcenter", StaticFiles(directory=STATIC), name="taskcenter-static")

    async def to_login(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, LoginRequired)
        return RedirectResponse(login_url(exc.next_path), status_code=303,
                                headers={"Cache-Control": "no-store"})

    async def switched_off(request: Request, exc: Exception) -> Response:
        return pages.render("off.html", 404)

    app.add_exception_handler(LoginRequired, to_login)
    app.add_exception_handler(TaskCenterOff, switched_off)

