"""A failed attempt's files in the task center, behind the login: its whole output
(`output.log`) and the diff it tried (`attempt.diff`), as the worker kept them
(jobs/engine/attempt_outcome.py) in the repository's state under the shared work directory
(`$STEPWISE_WORKDIR/repos/<owner>/<name>.git/stepwise/artifacts/...`).

Only the two names an attempt records are served, only for an attempt whose record lists them,
as plain text (never rendered), read without following links and capped like when written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, PlainTextResponse

from bot.taskcenter.auth import PageViewer, SettingsDep, StoreDep
from bot.taskcenter.pages import PAGE_HEADERS, render
from jobs.basics.errors import StateError
from jobs.inputs.caps import ARTIFACT_BYTES

NAMES = ("output.log", "attempt.diff")
_PART = re.compile(r"[A-Za-z0-9._-]{1,100}")
MISSING_HINT = ("the worker keeps these files in its work directory; the web app reads them "
                "when it shares that volume (docs/operating.md)")

router = APIRouter(include_in_schema=False)


def artifact_path(workdir: Path, repo: str, number: int, batch: int, attempt: int,
                  name: str) -> Path | None:
    """Where the worker wrote the file, or None when the record's names are not safe parts."""
    owner, _, repository = repo.partition("/")
    if not all(_PART.fullmatch(part) and part not in (".", "..") for part in (owner, repository)):
        return None
    return (workdir / "repos" / owner / f"{repository}.git" / "stepwise" / "artifacts"
            / f"issue-{number}" / "attempts" / f"{batch}-{attempt}" / name)


def read_capped(path: Path) -> str | None:
    """The file's text (at most ARTIFACT_BYTES and a little), never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(ARTIFACT_BYTES + 4096).decode("utf-8", errors="replace")


def _missing(message: str, hint: str = "") -> HTMLResponse:
    return render("problem.html", 404, title="No such file", message=message, hint=hint)


@router.get("/jobs/{job_id}/attempts/{batch}/{attempt}/{name}", response_model=None)
def attempt_file(job_id: str, batch: int, attempt: int, name: str, _: PageViewer,
                 store: StoreDep, settings: SettingsDep) -> PlainTextResponse | HTMLResponse:
    if name not in NAMES:
        return _missing(f"An attempt keeps only {' and '.join(NAMES)}.")
    try:
        job = store.load_id(job_id)
    except StateError as exc:
        return render("problem.html", 500, title="Damaged record", message=exc.message,
                      hint=exc.hint)
    found = next((a for b in job.batches if b.number == batch for a in b.attempts
                  if a.number == attempt), None) if job is not None else None
    suffix = f"attempts/{batch}-{attempt}/{name}"
    if job is None or found is None or not any(p.endswith(suffix) for p in found.artifacts):
        return _missing(f"Batch {batch}, attempt {attempt} of job {job_id!r} kept no {name}.")
    path = artifact_path(settings.workdir, job.repo, job.number, batch, attempt, name)
    text = read_capped(path) if path is not None else None
    if text is None:
        return _missing(f"The {name} of batch {batch}, attempt {attempt} is not on this host.",
                        MISSING_HINT)
    headers = {**PAGE_HEADERS, "Content-Disposition": f'inline; filename="{name}"'}
    return PlainTextResponse(text, headers=headers)
