"""Finding a job whose local record was lost, from its branch: the trailers name the job."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from jobs.kernel import trailers
from jobs.ports import Workspace


@dataclass(frozen=True)
class Orphan:
    job_id: str
    branch: str
    base_sha: str
    note_path: str | None
    created_at: datetime | None


def find_orphan(repo: Workspace, number: int, spec_digest: str, notes_dir: str) -> Orphan | None:
    """A `stepwise/issue-<N>*` branch whose first job commit carries our number and spec digest."""
    head = repo.resolve("HEAD")
    if head is None:
        return None
    for branch in repo.branches(f"stepwise/issue-{number}", f"stepwise/issue-{number}-*"):
        tip = repo.branch_head(branch)
        base = repo.merge_base(head, tip) if tip else None
        if not tip or not base:
            continue
        for commit in repo.commits(base, tip):
            job_id = commit.trailers.get(trailers.JOB, "")
            if not job_id.startswith(f"{number}-"):
                continue
            if commit.trailers.get(trailers.SPEC) != spec_digest[:16] or not commit.parents:
                break
            note = _note_on(repo, tip, notes_dir, number)
            return Orphan(job_id=job_id, branch=branch, base_sha=commit.parents[0],
                          note_path=note, created_at=_created(note))
    return None


def _note_on(repo: Workspace, tip: str, notes_dir: str, number: int) -> str | None:
    found = sorted(name for name in repo.names_in(tip, notes_dir)
                   if name.endswith(f"-issue-{number}.md"))
    return f"{notes_dir}/{found[0]}" if found else None


def _created(note_path: str | None) -> datetime | None:
    if note_path is None:
        return None
    stamp = note_path.rsplit("/", 1)[-1].split("-issue-", 1)[0]
    try:
        return datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
