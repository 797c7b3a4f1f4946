"""The task center's HTML pages (server-rendered, usable without JavaScript): login, the job
list and a job's timeline. Everything from a record is escaped by the template engine."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from bot.plumbing.pruned import PRUNED_HINT, pruned
from bot.taskcenter.auth import (
    COOKIE,
    SESSION_MAX_AGE_S,
    CacheDep,
    LinksDep,
    PageViewer,
    SettingsDep,
    StoreDep,
    client_of,
    dashboard_token,
    end_session,
    safe_next,
    secure_cookie,
    session_cookie,
    token_matches,
    viewer_of,
)
from bot.taskcenter.login_guard import LoginLimiter
from bot.taskcenter.markdown import render_markdown, render_markdown_inline
from bot.taskcenter.records import GROUP_LABELS, Filters, Group, StatusFilter, list_heads, load_jobs
from bot.taskcenter.views import (
    ago,
    duration,
    gate_view,
    milestones,
    refresh_seconds,
    seconds_label,
    summarise,
)
from jobs.basics.errors import StateError
from jobs.basics.redact import redact
from jobs.decisions.verdicts import undone_files
from jobs.kernel.feature_parts import check_batch_lines, gate_lines
from jobs.notes.progress import baseline_label, short

HERE = Path(__file__).parent
ENV = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                  undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
ENV.filters.update(redact=redact, short=short, seconds=seconds_label, markdown=render_markdown,
                   markdown_inline=render_markdown_inline,
                   utc=lambda d: d.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
                   iso=lambda d: d.astimezone(UTC).isoformat())
ENV.globals.update(duration=duration, ago=ago, group_labels=GROUP_LABELS,
                   baseline_label=baseline_label)

PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
MAX_LOGIN_BODY = 4096
PER_PAGE = 25
WRONG_LOGIN = "That is not the dashboard token."
TOO_MANY_LOGINS = "Too many wrong tokens from here: wait a minute, then try again."

router = APIRouter(include_in_schema=False)


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = ENV.get_template(name).render(now=datetime.now(UTC), **context)
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


@router.get("/")
def home() -> RedirectResponse:
    return RedirectResponse("/jobs", status_code=303)


@router.get("/login")
def login_form(request: Request, settings: SettingsDep, next: str | None = None) -> Response:
    token = dashboard_token(settings)
    if token is None:
        return render("off.html", 404)
    if viewer_of(request, token) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return render("login.html", next=safe_next(next), problem=None)


@router.post("/login")
async def login(request: Request, settings: SettingsDep) -> Response:
    token = dashboard_token(settings)
    if token is None:
        return render("off.html", 404)
    limiter: LoginLimiter = request.app.state.login_limiter
    client = client_of(request)
    wait = limiter.blocked(client)
    if wait > 0:
        refused = render("login.html", 429, next="/jobs", problem=TOO_MANY_LOGINS)
        refused.headers["Retry-After"] = str(math.ceil(wait))
        return refused
    body = await request.body()
    form = parse_qs(body[:MAX_LOGIN_BODY].decode("utf-8", "replace"), max_num_fields=5)
    offered = (form.get("token") or [""])[0].strip()
    target = safe_next((form.get("next") or [""])[0])
    if not offered or not token_matches(token, offered):
        limiter.failed(client)
        return render("login.html", 401, next=target, problem=WRONG_LOGIN)
    response = RedirectResponse(target, status_code=303)
    cookie = session_cookie(token, request.app.state.redis)
    response.set_cookie(COOKIE, cookie, max_age=SESSION_MAX_AGE_S, httponly=True,
                        samesite="lax", secure=secure_cookie(request, settings), path="/")
    return response


@router.post("/logout")
def logout(request: Request, settings: SettingsDep) -> RedirectResponse:
    """End the session in Redis (a copy of the cookie is good for nothing after), then drop
    the cookie."""
    end_session(dashboard_token(settings), request.cookies.get(COOKIE), request.app.state.redis)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax")
    return response


def filter_from(status: str | None) -> tuple[StatusFilter | None, str | None]:
    if not status:
        return None, None
    try:
        return StatusFilter(status), None
    except ValueError:
        return None, f"Unknown status {status!r}: showing every status."


def page_number(text: str | None) -> int:
    try:
        return max(1, min(int(text or 1), 100_000))
    except ValueError:
        return 1


@router.get("/jobs")
def jobs_page(_: PageViewer, store: StoreDep, cache: CacheDep, links: LinksDep,
              status: str | None = None, repo: str | None = None, q: str | None = None,
              page: str | None = None) -> HTMLResponse:
    chosen, notice = filter_from(status)
    repo = (repo or "").strip()[:200] or None
    q = (q or "").strip()[:200] or None
    filters = Filters(status=chosen, repo=repo, q=q)
    listing = list_heads(store.redis, cache, filters, page=page_number(page), per_page=PER_PAGE)
    rows = [summarise(job, links) for job in load_jobs(store, listing.heads)]

    def url(**changes: Any) -> str:
        params = {"status": chosen.value if chosen else None, "repo": repo, "q": q, **changes}
        query = urlencode({k: v for k, v in params.items() if v not in (None, "", 1)})
        return f"/jobs?{query}" if query else "/jobs"

    tabs = [(None, "All", sum(listing.group_counts.values()))] + [
        (g.value, GROUP_LABELS[g], listing.group_counts[g.value]) for g in Group]
    return render("jobs.html", rows=rows, listing=listing, filters=filters, tabs=tabs, url=url,
                  notice=notice, status_options=[s.value for s in StatusFilter])


@router.get("/jobs/{job_id}")
def job_page(job_id: str, _: PageViewer, store: StoreDep, links: LinksDep) -> HTMLResponse:
    try:
        job = store.load_id(job_id)
    except StateError as exc:
        return render("problem.html", 500, title="Damaged record", message=exc.message,
                      hint=exc.hint)
    if job is None:
        gone = pruned(store.redis, job_id)
        if gone is not None:
            return render("problem.html", 410, title="Job ended and pruned",
                          message=f"{gone.message()}.", hint=f"{PRUNED_HINT}.")
        return render("problem.html", 404, title="No such job",
                      message=f"There is no job {job_id!r}.", hint="It may have been deleted.")
    events_by_batch: dict[int, list[Any]] = defaultdict(list)
    for event in job.events:
        if event.batch is not None:
            events_by_batch[event.batch].append(event)
    return render("job.html", job=job, summary=summarise(job, links), gate=gate_view(job, links),
                  milestones=milestones(job), links=links, refresh=refresh_seconds(job),
                  events_by_batch=events_by_batch,
                  undone={b.number: files for b in job.batches if (files := undone_files(b))},
                  validation=job.config.validate_commands,
                  # the features' evidence, as the gate and the check runs say it
                  gate_evidence=gate_lines(job),
                  batch_evidence={b.number: lines for b in job.batches
                                  if (lines := check_batch_lines(job, b))})
