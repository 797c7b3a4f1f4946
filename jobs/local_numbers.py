"""Local mode without `--number`: `run` takes the job started from the same issue file, else the
next free number; the other commands take the only job that has not ended (several: exit 2,
listing them)."""

from __future__ import annotations

from pathlib import Path

from jobs.basics.errors import BadInputError
from jobs.basics.voice import shell_words
from jobs.kernel.job import Job
from jobs.local import local_jobs

MAX_LISTED = 10


def job_line(job: Job) -> str:
    """`#3 "Replace print" (awaiting_human at plan)`."""
    where = f" at {job.gate.kind}" if job.gate is not None else ""
    return f"#{job.number} {job.title!r} ({job.status}{where})"


def number_for_run(repo: Path, issue_file: Path) -> int:
    """The newest job started from `issue_file` (so `run` again resumes it), else the next
    free number (1 in a checkout without jobs)."""
    jobs = local_jobs(repo)
    started_from = str(issue_file.resolve())
    same = [job.number for job in jobs if job.issue_file == started_from]
    if same:
        return max(same)
    return max([0, *(job.number for job in jobs)]) + 1


def number_for_command(repo: Path, command: str) -> int:
    """The job a command without `--number` means: the only job that has not ended, or the only
    job there is; anything else is bad input naming the jobs to choose from."""
    jobs = local_jobs(repo)
    live = [job for job in jobs if not job.is_terminal]
    if len(live) == 1:
        return live[0].number
    if not live and len(jobs) == 1:
        return jobs[0].number
    root = shell_words(str(repo))
    if not jobs:
        raise BadInputError("there is no job in this repository",
                            hint=f"start one with `stepwise run --repo {root} --issue FILE.md`",
                            code="no_job")
    chosen = live or jobs
    listed = "; ".join(job_line(job) for job in chosen[-MAX_LISTED:])
    more = f" (and {len(chosen) - MAX_LISTED} more)" if len(chosen) > MAX_LISTED else ""
    what = f"{len(live)} jobs have not ended" if live else \
        f"{len(jobs)} jobs have ended and none is live"
    raise BadInputError(
        f"`stepwise {command}` needs --number: {what}: {listed}{more}",
        hint=f"pass the job's number, e.g. `stepwise {command} --repo {root} --number "
             f"{chosen[-1].number}` (all jobs: `stepwise jobs --repo {root}`)",
        code="which_job")

