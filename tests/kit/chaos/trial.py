"""Checking a finished trial: its job, the batches on the remote branch (duplicates, lost
ones), its pull requests and marked comments."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.chaos.cluster import Cluster
from tests.kit.chaos.sample import part_path
from tests.kit.chaos.settings import TERMINAL
from tests.kit.github_model import FakeRepo


@dataclass
class Trial:
    scenario: str
    name: str
    status: str = "missing"
    gate: str | None = None
    planned: int = 0
    committed: int = 0
    duplicates: int = 0
    other_duplicates: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    stuck: bool = False
    recover_s: list[float] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    shown_s: list[float] = field(default_factory=list)  # each gate: opening to its comment
    unseen: list[str] = field(default_factory=list)  # gates whose comment never appeared
    # each gate whose step left its comment unpublished: seconds until a reconciler pass took
    # it up (tests/kit/chaos/watch.py follow_owed)
    taken_up_s: list[float] = field(default_factory=list)
    late: int = 0  # of those, gates a whole pass ran past (started after, ended without them)

    @property
    def completed(self) -> bool:
        return self.status == JobStatus.COMPLETED.value

    def line(self) -> str:
        recover = ",".join(f"{r:.1f}" for r in self.recover_s) or "-"
        extra = (f" gates-shown-in={','.join(f'{g:.1f}' for g in self.shown_s)}s"
                 if self.shown_s else "") + (
            f" owed-gates-taken-up-in={','.join(f'{g:.1f}' for g in self.taken_up_s)}s"
            if self.taken_up_s else "") + (f" UNSEEN={self.unseen}" if self.unseen else "") + \
                (f" other-dups={self.other_duplicates}" if self.other_duplicates else "") + \
                (f" LOST={self.lost}" if self.lost else "") + (" STUCK" if self.stuck else "")
        notes = f" [{'; '.join(self.notes)}]" if self.notes else ""
        return (f"  {self.name}: {self.status}{'@' + self.gate if self.gate else ''} "
                f"planned={self.planned} committed={self.committed} dup={self.duplicates} "
                f"recover={recover}s t={self.seconds:.1f}s{extra}{notes}")


def branch_batches(repo: FakeRepo, branch: str, job_id: str) -> list[int]:
    """Batch numbers of the job's commits on the remote branch (Stepwise-Batch trailers)."""
    done = subprocess.run(
        ["git", f"--git-dir={repo.path}", "log", "--format=%(trailers:key=Stepwise-Job,"
         "valueonly,separator=%x2C)%x09%(trailers:key=Stepwise-Batch,valueonly,separator=%x2C)",
         f"refs/heads/{branch}", f"^refs/heads/{repo.default_branch}", "--"],
        capture_output=True, text=True, check=False)
    numbers = []
    for line in done.stdout.splitlines() if done.returncode == 0 else []:
        job, _, batch = line.partition("\t")
        if batch.strip() and job.strip() == job_id:
            numbers.append(int(batch.strip()))
    return numbers


MARKER = re.compile(r"<!-- stepwise:([^:]+):(.+?) -->")


def check(cluster: Cluster, repo: FakeRepo, trial: Trial, job: Job | None) -> Trial:
    """The trial's verdict, from the remote branch, the record and the fake's state.

    Lost: a batch the record calls committed whose commit is not on the remote branch; a batch
    skipped without a reason; in a completed job, a batch neither on the branch nor skipped, or
    a file still unchanged on the branch. Stuck: a job (or a label that never became one)
    neither ended nor waiting at a gate."""
    gh = cluster.gh
    if job is None:
        trial.status, trial.stuck = "missing", True
        trial.notes.append(f"no job record: {cluster.diagnose(None)}")
        return trial
    trial.status = job.status.value
    trial.gate = job.gate.kind.value if job.gate else None
    trial.planned = len(job.batches)
    trial.stuck = job.status not in TERMINAL and job.status is not JobStatus.AWAITING_HUMAN
    if trial.stuck:
        trial.notes.append(f"stuck `{job.status}`: {cluster.diagnose(job)}")
    if job.error is not None:
        trial.notes.append(f"error `{job.error.code}` ({job.error.retry_class})")
    elif job.gate is not None:
        code = f" `{job.gate.report.code}`" if job.gate.report is not None else ""
        trial.notes.append(f"at gate{code}: {job.gate.reason[:120]}")
    if job.baseline_ok is False and job.baseline:
        trial.notes.append(f"baseline failed: {job.baseline[-1].output_tail[-200:]!r}")
    numbers = branch_batches(repo, job.branch, job.id)
    trial.committed = len(set(numbers))
    trial.duplicates = sum(count - 1 for count in Counter(numbers).values())
    on_branch = set(numbers)
    for batch in job.batches:
        if batch.status is BatchStatus.COMPLETED and batch.number not in on_branch:
            trial.lost.append(f"batch {batch.number} recorded committed, not on the branch")
        elif batch.status is BatchStatus.SKIPPED and not batch.reason:
            trial.lost.append(f"batch {batch.number} skipped without a reason")
        elif job.status is JobStatus.COMPLETED and batch.status is not BatchStatus.SKIPPED \
                and batch.number not in on_branch:
            trial.lost.append(f"batch {batch.number} `{batch.status}` in a completed job")
    if job.status is JobStatus.COMPLETED:  # the ground truth: every file was changed
        skipped = {f for b in job.batches if b.status is BatchStatus.SKIPPED for f in b.files}
        on_remote = gh.branch_head(repo, job.branch) is not None
        for number in range(1, cluster.files + 1):
            path = part_path(number)
            text = gh.read_file(repo, path, job.branch) if on_remote else None
            if path not in skipped and (text is None or "old_total(" in text):
                trial.lost.append(f"{path} unchanged on the branch" if on_remote else
                                  f"{path}: the job completed, its branch is not on GitHub")
    # Other duplicates: a second job or branch for the issue, pull requests, marked comments.
    branches = subprocess.run(["git", f"--git-dir={repo.path}", "for-each-ref",
                               "--format=%(refname:short)", "refs/heads/stepwise/"],
                              capture_output=True, text=True, check=False).stdout.split()
    if len(branches) > 1:
        trial.other_duplicates.append(f"branches {branches}")
    pulls = [p for p in repo.pulls.values() if p.head_ref == job.branch]
    if len(pulls) > 1:
        trial.other_duplicates.append(f"{len(pulls)} pull requests")
    markers: Counter[tuple[int, str]] = Counter()
    for number, issue in repo.issues.items():
        for comment in issue.comments:
            for match in MARKER.finditer(comment.body):
                markers[(number, match.group(2))] += 1
    trial.other_duplicates += [f"comment {key!r} x{count} on #{number}"
                               for (number, key), count in markers.items() if count > 1]
    return trial
