"""The local file store: atomic versioned saves, compare-and-set, damaged files, the job lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.store import BusyError, ConflictError, FileStore
from jobs.basics.errors import StateError
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.records import make_batch, make_job

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "state")


def test_load_of_a_missing_issue_is_none(store: FileStore) -> None:
    assert not store.state_dir.exists()
    assert store.load(7) is None
    store.save(make_job(number=8))
    assert store.load(7) is None


def test_save_bumps_the_version_and_reads_back_equal(store: FileStore) -> None:
    job = make_job(batches=[make_batch(1), make_batch(2, 2)])
    assert job.version == 0
    saved = store.save(job)
    assert saved.version == 1
    assert job.version == 1
    assert saved == job
    loaded = store.load(job.number)
    assert loaded is not None
    assert loaded == saved
    assert store.path_for(7) == store.state_dir / "issue-7.json"
    assert store.path_for(7).exists()
    loaded.set_status(JobStatus.PLANNING)
    again = store.save(loaded)
    assert again.version == 2
    reread = store.load(7)
    assert reread is not None
    assert reread.status is JobStatus.PLANNING
    assert reread.version == 2


def test_save_leaves_no_temporary_files(store: FileStore) -> None:
    job = make_job()
    for _ in range(3):
        store.save(job)
    assert sorted(p.name for p in store.state_dir.iterdir()) == ["issue-7.json"]


def test_save_is_atomic_when_the_replace_fails(store: FileStore,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job()
    store.save(job)
    before = store.path_for(7).read_bytes()
    job.title = "changed"

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk on fire"):
        store.save(job)
    assert store.path_for(7).read_bytes() == before
    assert job.version == 1
    assert sorted(p.name for p in store.state_dir.iterdir()) == ["issue-7.json"]


def test_a_write_that_does_not_read_back_is_an_error(store: FileStore,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job()
    store.save(job)
    real_write = store._write_atomically

    def lossy_write(path: Path, payload: str, durable: bool = True) -> None:
        real_write(path, payload.replace("Replace print with logging", "something else"),
                   durable)

    monkeypatch.setattr(store, "_write_atomically", lossy_write)
    with pytest.raises(StateError, match="did not read back as written"):
        store.save(job)
    assert job.version == 1


def test_stale_version_is_a_conflict_and_changes_nothing(store: FileStore) -> None:
    store.save(make_job(batches=[make_batch(1)]))
    first = store.load(7)
    second = store.load(7)
    assert first is not None
    assert second is not None
    first.set_status(JobStatus.PLANNING)
    store.save(first)
    on_disk = store.path_for(7).read_bytes()
    second.batch(1).set_status(BatchStatus.IN_PROGRESS)
    with pytest.raises(ConflictError) as caught:
        store.save(second)
    assert caught.value.code == "state_conflict"
    assert isinstance(caught.value, StateError)
    assert "stored version 2, expected 1" in caught.value.message
    assert caught.value.hint
    assert store.path_for(7).read_bytes() == on_disk
    assert second.version == 1
    stored = store.load(7)
    assert stored is not None
    assert stored.status is JobStatus.PLANNING
    assert stored.batch(1).status is BatchStatus.PENDING


def test_stores_are_per_issue_number(store: FileStore) -> None:
    store.save(make_job(number=1))
    store.save(make_job(number=2))
    one, two = store.load(1), store.load(2)
    assert one is not None
    assert two is not None
    assert (one.number, two.number) == (1, 2)


@pytest.mark.parametrize(
    "content",
    ["{not json", "", '{"id": "7-x"}', "[]", '{"id": 1, "number": "seven"}'],
    ids=["syntax", "empty", "missing-fields", "wrong-shape", "wrong-types"],
)
def test_damaged_file_is_a_state_error_naming_the_path(store: FileStore, content: str) -> None:
    store.state_dir.mkdir(parents=True)
    path = store.path_for(7)
    path.write_text(content)
    with pytest.raises(StateError) as caught:
        store.load(7)
    assert str(path) in caught.value.message
    assert "damaged" in caught.value.message
    assert "move it aside" in caught.value.hint
    with pytest.raises(StateError):
        store.save(make_job())
    assert path.read_text() == content


def test_undecodable_file_is_a_state_error(store: FileStore) -> None:
    store.state_dir.mkdir(parents=True)
    store.path_for(7).write_bytes(b'{"id": "\xff\xfe garbage')
    with pytest.raises(StateError, match="damaged"):
        store.load(7)


# --- the lock ------------------------------------------------------------------------------

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from jobs.adapters.store import FileStore

    with FileStore(Path(sys.argv[1])).lock(int(sys.argv[2])):
        print("locked", flush=True)
        sys.stdin.read()  # hold the lock until the parent closes our stdin
    print("released", flush=True)
    """
)


@pytest.fixture
def other_process_lock(store: FileStore) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock of issue 7 until the test ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.state_dir), "7"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    try:
        yield child
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)


def release(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.close()
    assert child.stdout.readline().strip() == "released"
    assert child.wait(timeout=10) == 0


def test_lock_held_by_another_process_is_busy(store: FileStore,
                                              other_process_lock: subprocess.Popen[str]) -> None:
    with pytest.raises(BusyError) as caught, store.lock(7):
        pytest.fail("the lock was acquired twice")
    assert caught.value.code == "job_busy"
    assert f"pid {other_process_lock.pid}" in caught.value.message
    assert "#7" in caught.value.message
    assert caught.value.hint
    assert store.is_locked(7)
    # other issues are not affected
    assert not store.is_locked(8)
    with store.lock(8):
        assert store.is_locked(8)


def test_lock_is_free_again_when_the_other_process_releases(
    store: FileStore, other_process_lock: subprocess.Popen[str]
) -> None:
    assert store.is_locked(7)
    release(other_process_lock)
    assert not store.is_locked(7)
    with store.lock(7):
        lock_file = store.state_dir / "issue-7.lock"
        assert lock_file.read_text() == str(os.getpid())
    assert not store.is_locked(7)


def test_lock_released_on_error(store: FileStore) -> None:
    with pytest.raises(RuntimeError), store.lock(7):
        raise RuntimeError("boom")
    assert not store.is_locked(7)


def test_is_locked_does_not_take_the_lock(store: FileStore) -> None:
    assert not store.is_locked(7)
    assert not store.is_locked(7)
    with store.lock(7):
        assert store.is_locked(7)


def test_a_record_written_with_extra_reads_its_keys_typed_and_saves_without_it(
        store: FileStore) -> None:
    store.save(make_job(number=5))
    path = store.path_for(5)
    doc = json.loads(path.read_text())
    del doc["server"]
    doc.pop("untrusted_spec", None)  # at its default: a lean document leaves it out
    doc["extra"] = {"installation_id": 3, "untrusted_spec": True, "started_by": "maria",
                    "pull": {"number": 9, "node_id": "PR_9", "url": "", "draft": True}}
    path.write_text(json.dumps(doc))
    job = store.load(5)
    assert job is not None and job.untrusted_spec and job.server.installation_id == 3
    assert job.server.pull is not None and job.server.pull.number == 9
    store.save(job)
    rewritten = json.loads(path.read_text())
    assert "extra" not in rewritten and rewritten["server"]["pull"]["number"] == 9


def test_an_unsynced_save_writes_the_same_record_without_fsync(
        store: FileStore, monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job(batches=[make_batch(1)])
    store.save(job)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    job.set_status(JobStatus.PLANNING)
    store.save_unsynced(job, touched={1})
    assert synced == []
    stored = store.load(7)
    assert stored is not None and stored.status is JobStatus.PLANNING
    assert stored.version == job.version
    store.save(job, touched={1})  # the next durable save syncs every file it writes
    assert len(synced) >= 2
