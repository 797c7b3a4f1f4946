"""The task center in a terminal: `stepwise jobs` (a table) and `stepwise status` in server mode,
both reading the same Redis records as the web pages."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import redis
from rich.table import Table
from rich.text import Text

from bot.commands.registry import voice as server_voice
from bot.plumbing.pruned import PRUNED_HINT, pruned_for_issue
from bot.plumbing.redis_store import RedisStore
from bot.taskcenter.links import Links
from bot.taskcenter.records import Filters, HeadCache, StatusFilter, list_heads, load_jobs
from bot.taskcenter.views import ago, summarise
from jobs.basics.errors import BadInputError, StepwiseError
from jobs.basics.redact import redact
from jobs.engine import usecases
from jobs.engine.usecases import Progress
from jobs.notes.progress import render_card

REDIS_ENV = "STEPWISE_REDIS_URL"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
TASK_CENTER_ENV = "STEPWISE_TASK_CENTER_URL"
REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def redis_url() -> str:
    return os.environ.get(REDIS_ENV) or DEFAULT_REDIS_URL


def server_mode(flag: bool, repo: Path) -> bool:
    """`--server`, or STEPWISE_REDIS_URL set and `--repo` an owner/name that is not a directory."""
    return flag or (bool(os.environ.get(REDIS_ENV)) and not repo.is_dir()
                    and REPO_NAME.match(str(repo)) is not None)


def connect(url: str) -> redis.Redis:
    connection = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=10)
    try:
        connection.ping()
    except redis.RedisError as exc:
        raise StepwiseError(f"cannot reach Redis at {redact(url)}: {type(exc).__name__}",
                            hint=f"set {REDIS_ENV} to the server's Redis (see docs/operating.md)",
                            code="redis_unreachable") from None
    return connection


def server_status(repo: str, number: int, *, url: str | None = None) -> tuple[str, int]:
    """The progress card of the server's job for `repo#number`, and its exit code (0 while it
    is working, the gate's 3 or 4, 5 cancelled, 1 failed)."""
    if REPO_NAME.match(repo) is None:
        raise BadInputError(f"--repo {repo!r} is not owner/name",
                            hint="in server mode --repo names the GitHub repository, e.g. "
                            "octo-org/widgets")
    store = RedisStore(connect(url or redis_url()))
    job = store.find(repo, number)
    gone = pruned_for_issue(store.redis, repo, number) if job is None else None
    if gone is not None:
        raise BadInputError(gone.message(), hint=PRUNED_HINT,
                            code="job_pruned")
    if job is None:
        raise BadInputError(f"no Stepwise job for {repo}#{number} in Redis",
                            hint="check --repo and --number; `stepwise jobs` lists the jobs")
    card = render_card(job, voice=server_voice())
    center = os.environ.get(TASK_CENTER_ENV)
    if center:
        card += f"\n\nTask center: {Links('', center).job(job.id)}"
    report = usecases.status(job)
    if report.progress in (Progress.INTERRUPTED, Progress.WAITING_OUTSIDE):
        card += f"\n\n{report.message}"
    return card, report.exit_code


def jobs_table(*, status: StatusFilter | None, repo: str | None, text: str | None,
               limit: int, url: str | None = None) -> tuple[Table, int]:
    """A table of the newest jobs matching the filters, and how many match in all."""
    connection = connect(url or redis_url())
    listing = list_heads(connection, HeadCache(), Filters(status=status, repo=repo, q=text),
                         per_page=limit)
    now = datetime.now(UTC)
    table = Table(show_lines=False, header_style="bold")
    for column in ("id", "repository", "issue", "title", "status", "gate", "batches",
                   "last activity"):
        table.add_column(column, overflow="fold")
    for job in load_jobs(RedisStore(connection), listing.heads):
        row = summarise(job, Links(""))
        gate = f"{row.gate.kind}" + (f" (batch {row.gate.batch})" if row.gate and row.gate.batch
                                     else "") if row.gate else "—"
        label = row.group_label if row.status.value == row.group.value else \
            f"{row.group_label} ({row.status})"
        cells = (row.id, row.repo, f"#{row.number}", row.title, label, gate,
                 f"{row.batches.done}/{row.batches.total}", ago(row.updated_at, now))
        table.add_row(*(Text(cell) for cell in cells))  # Text: a title's [brackets] stay text
    return table, listing.total
