"""The one count of a job's batches and files, read from the record (which follows the branch):
committed, unchanged, skipped, reverted, unfinished, the batches split off, the leftovers for a
human, and the commits people pushed that were accepted. The change note, the progress card,
the closing summary and the task center all count through `tally`, so they always show the
same figures; `outcome` says "completed with leftovers" when something is left for a human:
targets (a reverted batch brought them back, or the final review found them) or the files whose
change a revert undid, whatever the recipe (`undone`)."""

from __future__ import annotations

from dataclasses import dataclass

from jobs.basics import markdown_safe as md
from jobs.decisions.verdicts import undone_files
from jobs.kernel.feature_parts import SET_ASIDE_FROM, batch_figures
from jobs.kernel.job import Job
from jobs.kernel.model import FINISHED_BATCH_STATUSES, BatchStatus, JobStatus, batch_statuses
from jobs.notes.note_parts import plural, target_key

NOTHING_TO_CHANGE = "nothing to change"
WITH_LEFTOVERS = "completed with leftovers"


@dataclass(frozen=True)
class Undone:
    """A file whose change a revert undid: it is as it was before its batch, left for a human."""

    batch: int
    path: str
    revert_commit: str | None = None

    def words(self) -> str:
        """"`src/b.py` — batch 2's change to it was reverted (`abc1234`)": untrusted path as
        code."""
        where = f" (`{self.revert_commit[:7]}`)" if self.revert_commit else ""
        return f"{md.code(self.path)} — batch {self.batch}'s change to it was reverted{where}"


@dataclass(frozen=True)
class Tally:
    """What a job's batches came to."""

    total: int = 0
    committed: int = 0  # completed: their commit is on the branch
    unchanged: int = 0  # skipped because nothing was left to change
    skipped: int = 0  # skipped with a person's (or a rule's) reason
    reverted: int = 0
    unfinished: int = 0  # pending, in progress, failed or waiting for CI
    split_off: int = 0  # batches a split made of a failing batch's culprits
    files_committed: int = 0  # distinct files the committed batches changed
    files_skipped: int = 0  # files of skipped batches (nothing to change included)
    files_reverted: int = 0  # files whose change a revert undid (`undone`)
    leftovers: tuple[str, ...] = ()  # `path:line` targets left for a human, sorted
    undone: tuple[Undone, ...] = ()  # files whose change a revert undid, by batch
    by_people: int = 0  # commits people pushed to the branch that were accepted

    @property
    def left_for_human(self) -> int:
        """Everything a human is asked to confirm: the targets and the files reverts undid."""
        return len(self.leftovers) + len(self.undone)

    @property
    def finished(self) -> bool:
        return self.unfinished == 0

    def batches_line(self) -> str:
        """"batches 4/7 completed" while work is left; once every batch is finished, what
        happened: "4 batches changed files, 3 had nothing to change, 1 skipped, 1 reverted";
        "no batch: nothing to change" for a plan that found nothing."""
        if not self.total:
            return "no batch: nothing to change"
        if not self.finished or not (self.unchanged or self.skipped or self.reverted):
            return f"batches {self.committed}/{self.total} completed" + (
                f" ({self.unchanged} had nothing to change)" if self.unchanged else "")
        parts = [f"{self.committed} batch{'' if self.committed == 1 else 'es'} changed files"]
        parts += [f"{self.unchanged} had nothing to change"] if self.unchanged else []
        parts += [f"{self.skipped} skipped"] if self.skipped else []
        parts += [f"{self.reverted} reverted"] if self.reverted else []
        return ", ".join(parts)

    def files_line(self) -> str:
        """"files: 9 committed, 2 skipped, 1 reverted; 2 commits by people; 3 leftovers for a
        human" (zeros left out)."""
        parts = [f"{self.files_committed} committed"]
        parts += [f"{self.files_skipped} skipped"] if self.files_skipped else []
        parts += [f"{self.files_reverted} reverted"] if self.files_reverted else []
        people = self.by_people
        tail = (f"; {people} commit{'' if people == 1 else 's'} by "
                f"{'a person' if people == 1 else 'people'}") if people else ""
        left = self.left_for_human
        tail += f"; {left} leftover{'' if left == 1 else 's'} for a human" if left else ""
        return "files: " + ", ".join(parts) + tail

    def line(self) -> str:
        """The batches and the files in one line, as every surface shows them."""
        return f"{self.batches_line()} · {self.files_line()}"


def tally(job: Job) -> Tally:
    """Count `job`'s batches and files (a pure function of the record)."""
    counts = {status: 0 for status in batch_statuses()}
    files = {status: 0 for status in batch_statuses()}
    unchanged = split_off = 0
    for batch in job.batches:
        counts[batch.status] += 1
        files[batch.status] += len(batch.files)
        if batch.status is BatchStatus.SKIPPED and batch.reason.startswith(NOTHING_TO_CHANGE):
            unchanged += 1
        split_off += 1 if SET_ASIDE_FROM in batch_figures(batch) else 0
    review = job.final_review.leftovers if job.final_review is not None else []
    leftovers = sorted({item for b in job.batches for item in b.leftovers} | set(review),
                       key=target_key)
    # The files reverts undid: those the reverted batches' commits changed, by batch.
    undone = tuple(Undone(batch=b.number, path=path, revert_commit=b.revert_commit)
                   for b in job.batches for path in undone_files(b))
    # The distinct files the committed batches changed (a file two batches touched, or one a
    # codemod left alone, is not counted per batch); a record without `changed_files`: its files.
    changed = {path for b in job.batches if b.status is BatchStatus.COMPLETED
               for path in (b.changed_files or b.files)}
    return Tally(
        total=len(job.batches), committed=counts[BatchStatus.COMPLETED], unchanged=unchanged,
        skipped=counts[BatchStatus.SKIPPED] - unchanged, reverted=counts[BatchStatus.REVERTED],
        unfinished=sum(n for s, n in counts.items() if s not in FINISHED_BATCH_STATUSES),
        split_off=split_off, files_committed=len(changed),
        files_skipped=files[BatchStatus.SKIPPED], files_reverted=len(undone),
        leftovers=tuple(leftovers), by_people=len(job.human_commits), undone=undone)


def outcome(job: Job, counted: Tally | None = None) -> str:
    """The job's status in words: "completed with leftovers" when a completed job left
    something for a human (targets, or files a revert undid), else its status."""
    counted = counted or tally(job)
    if job.status is JobStatus.COMPLETED and counted.left_for_human:
        return WITH_LEFTOVERS
    return str(job.status)


def leftover_words(counted: Tally) -> str:
    """"Left for a human to confirm: 1 file whose change a revert undid and 2 targets, listed"
    (the closing summary adds where)."""
    parts = [f"{plural(len(counted.undone), 'file')} whose change a revert undid"] \
        if counted.undone else []
    parts += [plural(len(counted.leftovers), "target")] if counted.leftovers else []
    return f"Left for a human to confirm: {' and '.join(parts)}, listed"
