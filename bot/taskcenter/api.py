"""The task center's JSON API: `GET /api/jobs` (filtered, paginated) and `GET /api/jobs/{id}`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, Response

from bot.plumbing.keys import job_key
from bot.plumbing.pruned import PRUNED_HINT, pruned
from bot.taskcenter.auth import ApiViewer, CacheDep, LinksDep, StoreDep
from bot.taskcenter.records import Filters, StatusFilter, list_heads, load_jobs, parse_head
from bot.taskcenter.views import JobDetail, JobPage, detail, summarise
from jobs.basics.errors import StateError

router = APIRouter(prefix="/api/jobs", tags=["task center"])

StatusQuery = Annotated[StatusFilter | None, Query(
    description="a status group (running, waiting, needs_human, failed, completed, cancelled) "
    "or one job status (queued, planning, awaiting_human, cancel_requested, interrupted)")]
RepoQuery = Annotated[str | None, Query(max_length=200, description="owner/name, exactly")]
TextQuery = Annotated[str | None, Query(max_length=200, description="words found in the title, "
                                        "repository, `#number`, job id, branch or gate")]
PageQuery = Annotated[int, Query(ge=1, le=100_000)]
PerPageQuery = Annotated[int, Query(ge=1, le=100)]


@router.get("", response_model=JobPage, summary="List jobs, newest first")
def list_jobs(_: ApiViewer, store: StoreDep, cache: CacheDep, links: LinksDep,
              status: StatusQuery = None, repo: RepoQuery = None, q: TextQuery = None,
              page: PageQuery = 1, per_page: PerPageQuery = 25) -> JobPage:
    """Every job (newest first) matching the filters, one page at a time. Needs the dashboard
    token (session cookie or `Authorization: Bearer`)."""
    listing = list_heads(store.redis, cache, Filters(status=status, repo=repo, q=q),
                         page=page, per_page=per_page)
    rows = [summarise(job, links) for job in load_jobs(store, listing.heads)]
    return JobPage(jobs=rows, page=page, per_page=per_page, total=listing.total,
                   pages=listing.pages, group_counts=listing.group_counts,
                   truncated=listing.truncated)


@router.get("/{job_id}", response_model=JobDetail, summary="One job's summary and record",
            responses={304: {"description": "unchanged since the version in If-None-Match"},
                       404: {"description": "no such job"},
                       410: {"description": "the job ended and retention removed its record "
                             "(STEPWISE_RETAIN_ENDED_DAYS)"}})
def get_job(job_id: str, _: ApiViewer, response: Response, store: StoreDep, links: LinksDep,
            if_none_match: Annotated[str | None, Header()] = None) -> JobDetail | Response:
    """The job's summary (status, open gate and the exact comment to post, batch counts) and
    its whole record: plan, batches with attempts and evidence, events. The ETag is the
    record's version, so a page can ask cheaply whether anything changed."""
    if if_none_match:
        head = parse_head(store.redis.get(job_key(job_id)))
        if head is not None and if_none_match.strip() == etag(head.version):
            return Response(status_code=304, headers={"ETag": etag(head.version),
                                                      "Cache-Control": "no-store"})
    try:
        job = store.load_id(job_id)
    except StateError as exc:
        raise HTTPException(500, f"{exc.message} ({exc.hint})") from None
    if job is None:
        gone = pruned(store.redis, job_id)
        if gone is not None:
            raise HTTPException(410, f"{gone.message()}. {PRUNED_HINT}.")
        raise HTTPException(404, f"no job {job_id!r}")
    response.headers["ETag"] = etag(job.version)
    return detail(job, links)


def etag(version: int) -> str:
    return f'"{version}"'
