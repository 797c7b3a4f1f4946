"""One count on every surface: jobs with reverts, skips (by a person and for nothing to change),
split batches and commits people pushed (accepted at the human_commit gate) show the same batch
and file figures, the same leftovers and the same "completed with leftovers" in the change
note, the progress card, the closing summary and the task center's page (served by the app over
a real Redis)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import redis
from fastapi.testclient import TestClient

from bot.github.conversation import closing_head
from bot.plumbing.redis_store import RedisStore
from jobs.features.bisect.record import bisect_part
from jobs.kernel.human_commits import HumanCommit
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.kernel.records import FinalReview
from jobs.notes.change_note import render_note
from jobs.notes.progress import render_card
from jobs.notes.tally import tally
from tests.bot.taskcenter.conftest import START
from tests.kit.records import make_batch, make_job

S = BatchStatus


def job_with(statuses: list[tuple[BatchStatus, int]], *, status: JobStatus, number: int,
             review_leftovers: tuple[str, ...] = (), reverted_leftovers: tuple[str, ...] = (),
             split_from: int | None = None) -> Job:
    batches = []
    for index, (batch_status, files) in enumerate(statuses, start=1):
        batch = make_batch(index, files=[f"src/b{index}_{k}.py" for k in range(files)],
                           status=batch_status, commit=f"{index:x}" * 40
                           if batch_status in (S.COMPLETED, S.REVERTED) else None)
        if batch_status is S.SKIPPED:
            batch.reason = "nothing to change" if index % 2 else "needs a manual fix"
        if batch_status is S.REVERTED:
            batch.leftovers = list(reverted_leftovers)
        batches.append(batch)
    if split_from is not None:  # the last batch is a culprit set aside from an earlier batch
        bisect_part(batches[-1]).split_from = split_from
    job = make_job(batches=batches, status=status, number=number)
    job.created_at, job.updated_at = START, START + timedelta(minutes=5)
    job.final_review = FinalReview(merged_with_base="c" * 40, ok=True,
                                   leftovers=list(review_leftovers))
    return job


JOBS = {
    "reverted": job_with([(S.COMPLETED, 2), (S.REVERTED, 3), (S.COMPLETED, 1)],
                         status=JobStatus.COMPLETED, number=41,
                         reverted_leftovers=("src/b2_0.py:3", "src/b2_1.py:9")),
    "skips": job_with([(S.SKIPPED, 2), (S.SKIPPED, 1), (S.COMPLETED, 4), (S.COMPLETED, 1)],
                      status=JobStatus.COMPLETED, number=42),
    "split": job_with([(S.COMPLETED, 3), (S.COMPLETED, 2), (S.SKIPPED, 1), (S.COMPLETED, 1)],
                      status=JobStatus.COMPLETED, number=43, split_from=2,
                      review_leftovers=("src/b3_0.py:1",)),
    "cancelled": job_with([(S.COMPLETED, 2), (S.REVERTED, 1), (S.PENDING, 2), (S.FAILED, 1)],
                          status=JobStatus.CANCELLED, number=44),
    "people": job_with([(S.COMPLETED, 2), (S.REVERTED, 1), (S.COMPLETED, 1)],
                       status=JobStatus.COMPLETED, number=45),
}
JOBS["people"].human_commits = [
    HumanCommit(sha="d" * 40, author="Ada Lovelace", login="ada", subject="docs: clarify usage",
                files=["README.md"], accepted_at=START),
    HumanCommit(sha="e" * 40, author="Grace Hopper", subject="fix: a typo the batch left",
                files=["src/b1_0.py", "src/b1_1.py"], accepted_at=START)]


def plain(html: str) -> str:
    """The page's text with tags dropped and entities read, whitespace folded."""
    text = re.sub(r"<[^>]+>", " ", html).replace("&amp;", "&").replace("&#39;", "'")
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("name", sorted(JOBS))
def test_every_surface_counts_the_same(name: str, logged_in: TestClient,
                                       connection: redis.Redis) -> None:
    job = RedisStore(connection).save(JOBS[name])
    counted = tally(job)
    batches, files = counted.batches_line(), counted.files_line()
    note = render_note(job, now=START)
    card = render_card(job, fold_finished=False)
    summary = closing_head(job)
    page = plain(logged_in.get(f"/jobs/{job.id}").text)
    for surface in (note, card, summary, page):
        assert batches in surface or batches.capitalize() in surface, (batches, surface)
        assert files in surface or files.capitalize() in surface, (files, surface)
    for item in counted.leftovers:  # the note lists them; the others count them
        assert f"- `{item}`" in note
    for undone in counted.undone:  # a revert's files, whatever the recipe: the note, the page
        assert f"- {undone.words()}" in note
        assert undone.path in page.split(f"Batch {undone.batch} reverted")[1].split("Batch ")[0]
    for commit in job.human_commits:  # the note and the job page list them; all count them
        assert f"`{commit.sha[:7]}` {commit.subject}" in note.split("## Commits by people")[1]
        assert f"{commit.sha[:7]} {commit.subject} — by {commit.by}" in page
    assert ("## Commits by people" in note) is bool(job.human_commits)
    with_leftovers = job.status is JobStatus.COMPLETED and bool(counted.left_for_human)
    for surface in (note, card, summary, page):
        assert ("completed with leftovers" in surface) is with_leftovers, surface


def test_the_figures_follow_the_record() -> None:
    reverted = tally(JOBS["reverted"])
    assert (reverted.committed, reverted.reverted, reverted.files_committed,
            reverted.files_reverted) == (2, 1, 3, 3)
    assert reverted.leftovers == ("src/b2_0.py:3", "src/b2_1.py:9")
    assert [(u.batch, u.path) for u in reverted.undone] == [
        (2, "src/b2_0.py"), (2, "src/b2_1.py"), (2, "src/b2_2.py")]
    assert reverted.files_line() == "files: 3 committed, 3 reverted; 5 leftovers for a human"
    assert reverted.batches_line() == "2 batches changed files, 1 reverted"
    skips = tally(JOBS["skips"])  # batch 1: nothing to change; batch 2: a person's reason
    assert (skips.unchanged, skips.skipped, skips.files_skipped) == (1, 1, 3)
    assert skips.files_line() == "files: 5 committed, 3 skipped"
    split = tally(JOBS["split"])
    assert split.split_off == 1 and split.leftovers == ("src/b3_0.py:1",)
    people = tally(JOBS["people"])
    assert (people.by_people, people.committed, people.reverted) == (2, 2, 1)
    assert people.files_line() == ("files: 3 committed, 1 reverted; 2 commits by people; "
                                   "1 leftover for a human")  # the file batch 2's revert undid
    assert tally(JOBS["reverted"]).by_people == 0
    cancelled = tally(JOBS["cancelled"])
    assert cancelled.unfinished == 2 and cancelled.batches_line() == "batches 1/4 completed"
