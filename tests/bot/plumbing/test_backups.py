"""docs/operating.md's backup and restore procedures, run as written (the shell blocks marked
`<!-- procedure: NAME -->`) against a real redis-server in the append-only mode Compose and
the chart run: what a backup held comes back, job records included; what was written after it
does not. And the guide's old advice, an RDB snapshot dropped beside the append-only file,
comes back empty: the reason the RDB restore goes through a new `appendonlydir`."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from bot.plumbing.redis_store import RedisStore
from tests.kit.records import make_batch, make_job
from tests.kit.redis_server import free_port, redis_binary

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "operating.md"
BLOCK = re.compile(r"<!-- procedure: ([a-z-]+) -->\n```sh\n(.*?)```", re.DOTALL)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def procedures() -> dict[str, str]:
    return dict(BLOCK.findall(GUIDE.read_text()))


@contextmanager
def append_only_redis(data: Path, port: int) -> Iterator[redis.Redis]:
    """redis-server as docker-compose.yml runs it (append-only, noeviction), on `data`."""
    process = subprocess.Popen(
        [redis_binary(), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(data),
         "--appendonly", "yes", "--save", "", "--maxmemory-policy", "noeviction"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis.from_url(f"redis://127.0.0.1:{port}/0")
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                assert time.monotonic() < deadline and process.poll() is None, "no redis"
                time.sleep(0.05)
        yield client
    finally:
        process.send_signal(signal.SIGTERM)  # as `docker compose stop` does
        process.wait(timeout=20)


def run(procedure: str, *, port: int, data: Path, backup: Path) -> None:
    """A block of the guide, in bash with its three names set for this test's Redis."""
    preamble = (f'rcli() {{ redis-cli -p {port} "$@"; }}\nDATA={data}\nBACKUP={backup}\n'
                "set -euo pipefail\n")
    done = subprocess.run(["bash", "-c", preamble + procedures()[procedure]],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{procedure}: {done.stdout}\n{done.stderr}"


def fill(client: redis.Redis, count: int) -> None:
    store = RedisStore(client)
    for n in range(count):
        job = make_job(number=n + 1, batches=[make_batch(1), make_batch(2)])
        job.repo = "octo/widgets"
        store.save(job)


def test_the_guides_backup_restores_into_the_append_only_redis(tmp_path: Path) -> None:
    assert set(procedures()) == {"backup", "restore", "restore-rdb"}
    data, backup, port = tmp_path / "data", tmp_path / "backup", free_port()
    data.mkdir()
    with append_only_redis(data, port) as client:
        fill(client, 20)
        run("backup", port=port, data=data, backup=backup)
        held = client.dbsize()
        job_ids = RedisStore(client).job_ids(limit=100)
        client.bgsave()  # the RDB variant: copied once the save finished, as the guide says
        while client.info("persistence")["rdb_bgsave_in_progress"]:
            time.sleep(0.05)
        assert client.info("persistence")["rdb_last_bgsave_status"] == "ok"
        shutil.copy(data / "dump.rdb", backup / "dump.rdb")
        client.set("after-the-backup", "1")
    assert held > 20 and len(job_ids) == 20

    run("restore", port=port, data=data, backup=backup)
    with append_only_redis(data, port) as client:
        assert client.dbsize() == held
        assert client.get("after-the-backup") is None
        store = RedisStore(client)
        assert all(store.load_id(job_id) is not None for job_id in job_ids)
        client.set("after-the-restore", "1")

    run("restore-rdb", port=port, data=data, backup=backup)
    with append_only_redis(data, port) as client:
        assert client.dbsize() == held
        assert all(RedisStore(client).load_id(job_id) is not None for job_id in job_ids)
        client.set("written-after-the-rdb-restore", "1")
    with append_only_redis(data, port) as client:  # and it stays append-only from there
        assert client.get("written-after-the-rdb-restore") == b"1"
        assert client.config_get("appendonly")["appendonly"] == "yes"


def test_an_rdb_snapshot_beside_the_append_only_file_comes_back_empty(tmp_path: Path) -> None:
    """What the guide used to say: restored so, an RDB backup is silently ignored."""
    data, port = tmp_path / "data", free_port()
    data.mkdir()
    with append_only_redis(data, port) as client:
        fill(client, 3)
        client.save()
    naive = tmp_path / "naive"
    naive.mkdir()
    shutil.copy(data / "dump.rdb", naive / "dump.rdb")
    with append_only_redis(naive, port) as client:
        assert client.dbsize() == 0
