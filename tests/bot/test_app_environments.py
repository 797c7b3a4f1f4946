"""Job environments through the App: signed webhooks, a real Redis and RQ worker, the loopback
fake GitHub, real bubblewrap and the real registries through Stepwise's egress proxy.

A Python package (`six` from PyPI and an editable install of the package itself) and a Node
package (`npm ci` of `is-number`): the first job builds the environment under
STEPWISE_WORKDIR/envs/<owner>+<repo>/, the second job on the same key reuses it without running
setup and without asking the proxy for a single tunnel. A probe job (`network: true`) shows from
inside setup and validation what the network is: the registry through the proxy, and nothing
else (Redis's port, another loopback listener, cloud metadata, a private address, a host off the
allowlist), whatever `network_allow` says.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.environments.record import environment_of
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.kernel.records import CommandEvidence
from tests.bot.conftest import NAME, OWNER, REPO, World, open_world
from tests.kit.env_repos import (
    NODE_CONFIG,
    NODE_ISSUE_BLOCK,
    PY_CONFIG,
    PY_ISSUE_BLOCK,
    node_files,
    probe_source,
    python_files,
)
from tests.kit.repos import git

pytestmark = pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap")
STEPS = 8  # gates a job may pass before it must have finished


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python` is the test's interpreter (setup makes its virtualenv from it)."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")


def run_to_end(world: World, number: int) -> Job:
    """Label issue `number`, then approve the plan and every milestone until the job ends."""
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    job: Job = world.job(number)
    assert job.gate is not None and job.gate.kind is Gate.PLAN, (job.status, job.gate, job.error)
    for _ in range(STEPS):
        if job.status is not JobStatus.AWAITING_HUMAN:
            break
        assert job.gate is not None and job.gate.kind in (Gate.PLAN, Gate.MILESTONE), \
            (job.gate, job.error)
        world.comment("/stepwise approve", by="maria", on=number)
        world.work()
        job = world.job(number)
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate, job.error)
    return job


def every_command(job: Job) -> list[CommandEvidence]:
    """Every command the job ran after setup: the baseline and each attempt's."""
    return [*job.baseline, *(c for b in job.batches for a in b.attempts for c in a.commands)]


def cache_dir(world: World) -> Path:
    return world.ctx.settings.workdir / "envs" / f"{OWNER}+{NAME}"


def plan_says(world: World, number: int, how: str) -> bool:
    return any("Plan for" in body and f"environment {how}" in body
               for body in world.bodies(number))


def assert_reused(world: World, first: Job, second: Job) -> None:
    """The second job took the first one's environment: setup did not run, no tunnel asked."""
    assert environment_of(second) is not None and environment_of(first) is not None
    assert environment_of(second).key == environment_of(first).key
    assert environment_of(second).from_cache and environment_of(second).setup == []
    assert plan_says(world, second.number, "reused from the cache")
    assert all(c.egress == [] for c in every_command(second)), \
        [c.egress for c in every_command(second)]
    built = [p for p in cache_dir(world).iterdir() if not p.name.startswith(".")]
    assert [p.name for p in built] == [environment_of(first).key], built


@pytest.mark.slow  # real PyPI installs through the App: tens of seconds
def test_a_python_package_is_set_up_once_and_reused_by_the_next_job(
    tmp_path: Path, redis_url: str,
) -> None:
    config = PY_CONFIG + "batches_per_milestone: 10\n"
    with open_world(tmp_path, redis_url, files=python_files(config)) as world:
        for title in ("Rename old_format", "Rename old_format again"):
            world.gh.add_issue(REPO, title, PY_ISSUE_BLOCK, user="maria")
        first = run_to_end(world, 2)
        env = environment_of(first)
        assert env is not None and not env.from_cache and ".venv" in env.entries
        assert [c.argv[0] for c in env.setup] == ["python", "pip"]
        assert all(c.exit_code == 0 and c.isolated for c in env.setup), env.setup
        assert "pypi.org:443 allowed" in env.setup[1].egress  # pip went through the proxy
        assert plan_says(world, 2, "built for this job")
        assert [b.status for b in first.batches] == [BatchStatus.COMPLETED] * 2
        for batch in first.batches:  # pytest from the environment, importing six and shapes
            last = batch.attempts[-1].commands[-1]
            assert last.argv == ["pytest", "-q"] and "1 passed" in last.output_tail, last
        pushed = git(world.repo.path, "diff", "--name-only", first.base_sha, first.branch)
        assert sorted(pushed.splitlines()) == [first.note_path, "src/shapes/circle.py",
                                               "src/shapes/square.py"]  # no .venv, no egg-info
        assert (cache_dir(world) / env.key / "tree" / ".venv" / "bin" / "pytest").exists()

        # The next job on the same default branch: the same key, the environment reused.
        # Its batches fail unless the environment is there (the worktree has no .venv).
        assert_reused(world, first, run_to_end(world, 3))


@pytest.mark.slow  # a real npm install through the App
def test_a_node_package_installs_with_npm_ci_once_through_the_app(
    tmp_path: Path, redis_url: str,
) -> None:
    config = NODE_CONFIG + "batches_per_milestone: 10\n"
    with open_world(tmp_path, redis_url, files=node_files(config)) as world:
        for title in ("Use const", "Use const again"):
            world.gh.add_issue(REPO, title, NODE_ISSUE_BLOCK, user="maria")
        first = run_to_end(world, 2)
        env = environment_of(first)
        assert env is not None and not env.from_cache and "node_modules" in env.entries
        assert env.setup[0].exit_code == 0, env.setup[0].output_tail
        assert "registry.npmjs.org:443 allowed" in env.setup[0].egress
        assert "ok" in first.batches[0].attempts[-1].commands[-1].output_tail
        assert_reused(world, first, run_to_end(world, 3))


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() in the thread
        self.sock.close()
        self.thread.join(timeout=5)


@pytest.fixture
def listener() -> Iterator[Listener]:
    opened = Listener()
    yield opened
    opened.close()


METADATA, PRIVATE = "169.254.169.254", "10.20.30.40"


def probe_files(redis_port: int, listener_port: int) -> dict[str, str | bytes]:
    """A Python repository whose setup and validation run the probe with `network: true` and
    an allowlist naming every refused target too: the proxy refuses them whatever it says."""
    direct = [("redis", "127.0.0.1", redis_port), ("listener", "127.0.0.1", listener_port),
              ("metadata", METADATA, 80), ("private", PRIVATE, 80)]
    proxied = [("registry", "https://pypi.org/simple/six/"),
               ("redis", f"https://127.0.0.1:{redis_port}/"),
               ("listener", f"https://127.0.0.1:{listener_port}/"),
               ("metadata", f"https://{METADATA}/latest/meta-data/"),
               ("private", f"https://{PRIVATE}/"),
               ("unlisted", "https://example.com/")]
    config = {"setup": ["python probe.py"], "validate": ["python probe.py"],
              "allow_commands": ["python"], "network": True, "batch_size": 1,
              "batches_per_milestone": 10,
              "network_allow": ["pypi.org", f"127.0.0.1:{redis_port}",
                                f"127.0.0.1:{listener_port}", METADATA, PRIVATE]}
    return {".github/stepwise.yml": yaml.safe_dump(config),
            "probe.py": probe_source(direct=direct, proxied=proxied), "src/one.py": "OLD = 1\n"}


PROBE_ISSUE = """```stepwise
recipe: replace
paths: ["src/*.py"]
find: ['\\bOLD\\b']
replace: 'NEW'
```
"""


def probe_results(output: str) -> dict[str, str]:
    """The probe's lines as {"direct redis": "unreachable ConnectionRefusedError 111", ...}."""
    found = {}
    for line in output.splitlines():
        how, name, result = [*line.split(" ", 2), "", ""][:3]
        if how in ("direct", "proxied"):
            found[f"{how} {name}"] = result
    return found


def assert_only_the_registry(command: CommandEvidence, ports: tuple[int, int]) -> None:
    """One probe run: the registry reached through the proxy, every other target unreachable
    directly (no route, or nothing listening on the sandbox's own loopback) and through the
    proxy (refused with 403 before any packet), each tunnel in the evidence with its reason."""
    lines = probe_results(command.output_tail)
    assert lines["proxied registry"] == "reached 200", command.output_tail
    for name in ("redis", "listener"):
        assert lines[f"direct {name}"].startswith("unreachable ConnectionRefusedError"), lines
    for name in ("metadata", "private"):  # no route at all inside the namespace
        assert lines[f"direct {name}"].startswith("unreachable OSError 101"), lines
    for name in ("redis", "listener", "metadata", "private", "unlisted"):
        assert lines[f"proxied {name}"].startswith("unreachable") and "403" in \
            lines[f"proxied {name}"], lines
    redis_port, listener_port = ports
    egress = command.egress
    assert egress[0] == "pypi.org:443 allowed", egress
    refused = {entry.split(" ", 1)[0]: entry for entry in egress[1:]}
    assert set(refused) == {f"127.0.0.1:{redis_port}", f"127.0.0.1:{listener_port}",
                            f"{METADATA}:443", f"{PRIVATE}:443", "example.com:443"}, egress
    assert "127.0.0.0/8" in refused[f"127.0.0.1:{redis_port}"]
    assert "127.0.0.0/8" in refused[f"127.0.0.1:{listener_port}"]
    assert "169.254.0.0/16" in refused[f"{METADATA}:443"]
    assert "10.0.0.0/8" in refused[f"{PRIVATE}:443"]
    assert "not on network_allow" in refused["example.com:443"]


def test_setup_and_validation_reach_the_registry_and_nothing_else(
    tmp_path: Path, redis_url: str, listener: Listener,
) -> None:
    redis_port = int(urlsplit(redis_url).port or 6379)
    ports = (redis_port, listener.port)
    with open_world(tmp_path, redis_url, files=probe_files(*ports)) as world:
        world.gh.add_issue(REPO, "Rename OLD", PROBE_ISSUE, user="maria")
        job = run_to_end(world, 2)
        assert environment_of(job) is not None and len(environment_of(job).setup) == 1
        assert_only_the_registry(environment_of(job).setup[0], ports)  # inside setup
        validations = [c for b in job.batches for a in b.attempts for c in a.commands]
        assert validations and all(c.isolated for c in validations)
        for command in [*job.baseline, *validations]:  # inside validation
            assert_only_the_registry(command, ports)
        assert world.redis.get("stepwise:pwned") is None
    assert listener.accepted == 0  # nothing reached the other loopback listener
