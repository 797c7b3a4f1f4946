"""Redis's password never reaches a sandboxed command, through the App.

The worker runs with `STEPWISE_REDIS_URL` holding credentials (in its environment, as a
deployment sets it). A job's setup and validation run a probe that looks for the password
without knowing it (it compares the SHA-256 of every word it can read with the password's) in
its own environment, in every process's environment and command line it can see, and in every
file of the worker's workdir; and it tries Redis's port. Outside the sandbox the same probe
finds the password, so its silence inside means something.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.environments.record import environment_of
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.records import CommandEvidence
from tests.bot.conftest import REPO, open_world
from tests.kit.redis_server import running_redis

pytestmark = [pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap"),
              pytest.mark.integration]
PASSWORD = "Rq7pw9Q2xLkVz4"  # letters and digits: one word however the probe splits text

PROBE = '''"""Looks for a secret it only knows the SHA-256 of; tries a TCP port."""

import glob
import hashlib
import os
import re
import socket
import sys

wanted, workdir, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
sources = found = 0


def scan(label, data):
    global sources, found
    sources += 1
    for word in re.split(rb"[^A-Za-z0-9]+", data):
        if word and hashlib.sha256(word).hexdigest() == wanted:
            found += 1
            print("FOUND in", label)


scan("own environment", "\\n".join(f"{k}={v}" for k, v in os.environ.items()).encode())
for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    try:
        scan(path, open(path, "rb").read())
    except OSError:
        pass
for root, _dirs, files in os.walk(workdir):
    for name in files:
        try:
            scan(os.path.join(root, name), open(os.path.join(root, name), "rb").read())
        except OSError:
            pass
try:
    socket.create_connection(("127.0.0.1", port), 3).close()
    print("redis reached")
except OSError as exc:
    print("redis unreachable", type(exc).__name__)
print(f"scanned {sources} sources, found {found}")
'''
ISSUE = """```stepwise
recipe: replace
paths: ["src/*.py"]
find: ['\\bOLD\\b']
replace: 'NEW'
```
"""


@pytest.fixture(scope="module")
def locked_redis() -> Iterator[str]:
    with running_redis(password=PASSWORD) as url:
        yield url


def probe_argv(workdir: Path, redis_url: str) -> list[str]:
    wanted = hashlib.sha256(PASSWORD.encode()).hexdigest()
    return ["python", "probe.py", wanted, str(workdir), str(urlsplit(redis_url).port)]


def test_the_probe_finds_the_password_outside_the_sandbox(tmp_path: Path,
                                                           locked_redis: str) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    argv = [sys.executable, *probe_argv(tmp_path, locked_redis)[1:]]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STEPWISE_REDIS_URL": locked_redis}, check=True)
    assert "FOUND in own environment" in done.stdout and "redis reached" in done.stdout


def test_setup_and_validation_never_see_the_redis_password(
    tmp_path: Path, locked_redis: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert f":{PASSWORD}@" in locked_redis
    monkeypatch.setenv("STEPWISE_REDIS_URL", locked_redis)
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    workdir = tmp_path / "work"
    argv = " ".join(probe_argv(workdir, locked_redis))
    config = {"setup": [argv], "validate": [argv], "allow_commands": ["python"],
              "network": "setup", "network_allow": ["pypi.org"], "batches_per_milestone": 10}
    files: dict[str, str | bytes] = {".github/stepwise.yml": yaml.safe_dump(config),
                                     "probe.py": PROBE, "src/one.py": "OLD = 1\n"}
    with open_world(tmp_path, locked_redis, files=files) as world:
        world.gh.add_issue(REPO, "Rename OLD", ISSUE, user="maria")
        world.send("issues.labeled", issue_number=2, sender="maria")
        world.work()
        assert world.job(2).gate.kind is Gate.PLAN, world.job(2).error
        world.comment("/stepwise approve", by="maria", on=2)
        world.work()
        job = world.job(2)
        if job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.MILESTONE:
            world.comment("/stepwise approve", by="maria", on=2)
            world.work()
            job = world.job(2)
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate, job.error)
    assert environment_of(job) is not None
    runs: list[CommandEvidence] = [*environment_of(job).setup, *job.baseline,
                                   *(c for b in job.batches for a in b.attempts
                                     for c in a.commands)]
    assert len(runs) >= 3 and all(c.isolated for c in runs)
    for run in runs:
        assert "FOUND" not in run.output_tail, run.output_tail
        assert "redis unreachable" in run.output_tail, run.output_tail
        assert "found 0" in run.output_tail and "scanned 0 " not in run.output_tail
