"""The attempt's start is written without fsync: a crash that loses it is recovered all the same.

A power cut after the attempt committed but before its durable record leaves the disk with
the record as it was durably written last (the unsynced start is lost; the validated tree,
recorded durably before the commit landed, is there) and a commit on the branch that no record
names: the next run adopts that commit (Stepwise's, of the recorded tree) and does not redo
the batch.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from jobs.adapters.store import FileStore
from jobs.engine import batch_run
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from tests.kit.local_e2e import (
    NUMBER,
    assert_exit,
    batch_commits,
    branch_commits,
    branch_head,
    build_sample,
    config_text,
    issue,
    load_job,
    session,
)


class PowerCut(Exception):
    """Stands in for the machine losing power."""


def record_files(store: FileStore) -> list[Path]:
    batches = store.batch_path(NUMBER, 1).parent
    found = [store.path_for(NUMBER), store.events_path(NUMBER)]
    if batches.is_dir():
        found += sorted(batches.iterdir())
    return [path for path in found if path.exists()]


def test_a_lost_attempt_start_and_a_commit_no_record_names_are_recovered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    synced: dict[Path, bytes] = {}  # what the disk held before the first unsynced write
    fsyncs_in_unsynced: list[int] = []
    real_save_unsynced, real_fsync = FileStore.save_unsynced, os.fsync
    real_save = FileStore.save

    def durable(self: FileStore, job: Job, *, touched: Collection[int] | None = None,
                durable: bool = True) -> Job:
        saved = real_save(self, job, touched=touched, durable=durable)
        if synced and durable:  # what a power cut keeps from now on
            synced.clear()
            synced.update({path: path.read_bytes() for path in record_files(self)})
        return saved

    def remembering(self: FileStore, job: Job, *, touched: Collection[int] | None = None) -> Job:
        if not synced:
            synced.update({path: path.read_bytes() for path in record_files(self)})
        monkeypatch.setattr(os, "fsync", lambda fd: fsyncs_in_unsynced.append(fd))
        try:
            return real_save_unsynced(self, job, touched=touched)
        finally:
            monkeypatch.setattr(os, "fsync", real_fsync)

    def power_cut(repository: Any, job: Job, *_args: Any) -> None:
        store = FileStore(repository.state_dir)
        for path in record_files(store):  # the unsynced write never reached the disk
            if path not in synced:
                path.unlink()
        for path, data in synced.items():
            path.write_bytes(data)
        raise PowerCut

    monkeypatch.setattr(FileStore, "save_unsynced", remembering)
    monkeypatch.setattr(FileStore, "save", durable)
    monkeypatch.setattr(batch_run, "record_changes", power_cut)
    with pytest.raises(PowerCut):
        session(repo).run(issue(), yes=True)
    assert synced and fsyncs_in_unsynced == []
    lost = load_job(repo)
    first = lost.batch(1)
    assert first.commit is None and first.tree  # recorded before it landed
    made = branch_head(repo, lost.branch)
    assert made is not None and made != lost.head_sha  # the attempt's commit, on the branch

    monkeypatch.undo()
    outcome = session(repo).run(issue(), yes=True)
    assert_exit(outcome, 0)
    job = load_job(repo)
    commits = branch_commits(repo, job)
    carrying = [c for c in commits if c.trailers.get("Stepwise-Batch") == "1"]
    assert [c.sha for c in carrying] == [made]  # adopted, not redone
    first = job.batch(1)
    assert first.status is BatchStatus.COMPLETED and first.adopted is True and first.commit == made
    assert len(batch_commits(commits)) == len(job.batches)


def test_each_batch_makes_one_durable_record_write(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[str] = []
    real_save = FileStore.save

    def counting(self: FileStore, job: Job, *, touched: Collection[int] | None = None,
                 durable: bool = True) -> Job:
        running = any(b.status is BatchStatus.IN_PROGRESS for b in job.batches)
        landing = any(b.status is BatchStatus.IN_PROGRESS and b.tree and not b.commit
                      for b in job.batches)
        writes.append("landing" if landing else "durable" if durable else
                      "unsynced running" if running else "unsynced")
        return real_save(self, job, touched=touched, durable=durable)

    monkeypatch.setattr(FileStore, "save", counting)
    repo = build_sample(tmp_path / "repo", config=config_text(batches_per_milestone=4))
    assert_exit(session(repo).run(issue(), yes=True), 0)
    job = load_job(repo)
    batches = len([b for b in job.batches if b.commit])
    assert batches >= 2
    starts = [n for n, kind in enumerate(writes) if kind == "unsynced running"]
    assert len(starts) == batches  # each attempt's start, unsynced
    # Between one attempt's start and the next, one durable write: the attempt's end (the
    # base check between batches is written unsynced: git is asked again if it is lost), and
    # before it the validated tree, recorded durably before the commit lands (issue 40).
    between = [writes[a:b].count("durable") for a, b in pairwise(starts)]
    assert between == [1] * (batches - 1), writes
    assert [writes[a:b].count("landing") for a, b in pairwise(starts)] == [1] * (batches - 1)
