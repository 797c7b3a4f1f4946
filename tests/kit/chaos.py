"""Chaos run: exactly-once batches through killed workers, a Redis restart, GitHub faults and
duplicated deliveries (issue 4, "Evidence to produce"; docs/reliability.md says what each proves).

    .venv/bin/python -m tests.kit.chaos                 # 20 kill trials, then the others (~8 min)
    .venv/bin/python -m tests.kit.chaos --quick         # 3 kill trials, most others once (~2 min)
    .venv/bin/python -m tests.kit.chaos --trials 40 --seed 7 --verbose --markdown

Everything runs on 127.0.0.1: a real redis-server (append-only file on) started here on a free
port in a temporary directory; two real `stepwise worker` processes (RQ workers with the
scheduler); the loopback FakeGitHub of tests/kit in this process (bare git repositories are
the remotes); the web app served by uvicorn in a thread, receiving signed webhooks over HTTP.

Each trial is one job on a fresh repository: 12 files that each need one replacement,
`batch_size: 1`, one milestone, `require_plan_approval: false` (true in `duplicates`), each
batch validated by `python -m unittest discover -s tests -q` (a 12-test suite) in the sandbox.
Timings are shortened so a trial takes seconds: STEPWISE_LEASE_TTL_S=2,
STEPWISE_REAP_INTERVAL_S=1, STEPWISE_RECONCILE_INTERVAL_S=5, STEPWISE_BACKOFF_S=[0.5,1,2],
STEPWISE_CALL_BACKOFF_S=[0.2,0.4,0.8] (production: 30 s, 20 s, 20 s, 5/15/45 s, 0.5/1/2 s; the
faults-prod scenario runs with those).

Scenarios (docs/reliability.md says what each one proves):
  baseline       no faults: the control, and the job duration the kill moments are drawn from
  kill           a fresh installation per trial; the worker advancing the job is killed with
                 everything it started (SIGSTOP then SIGKILL of its process tree and group) at
                 a uniform random moment of the expected duration, or (every third trial) right
                 after a batch reached the remote branch, i.e. between the push and the record
                 write; the worker is restarted at once
  kill-survivor  the killed worker is not restarted: the surviving one must finish the job;
                 odd trials kill the worker running RQ's scheduler, even ones the other
  kill-label     the worker handling the `labeled` webhook is killed mid-event and restarted
                 at once: while it waits for GitHub (a call answered 3 s late makes the moment
                 certain), or as the repository's first clone begins; when no job appeared,
                 the maintainer redelivers the webhook (same delivery id)
  redis-restart  SIGTERM redis-server mid-job (it flushes the append-only file), start it again
                 on the same port and directory; workers that exited are restarted and reported
  no-faults      the control of the fault scenarios: the same job and maintainer, no faults
  faults         20% of GitHub calls, on every endpoint (the installation-token endpoint and
                 comment posting included), fail: 502 or a secondary rate limit (403 +
                 Retry-After: 1) before the call is handled, or, for a third of the faults on
                 writes, 502 after it was ("done, then 502"). Each job stops at the plan gate
                 and a milestone gate; the maintainer answers a gate only once its comment
                 exists on GitHub (approve; retry at a failure gate from a transient fault)
  faults-api     the same with the token endpoint spared
  faults-prod    one faults trial with the production lease, reaper, reconciler and backoff
  duplicates     every webhook delivered twice at once (same X-GitHub-Delivery), every command
                 comment delivered once more under a second delivery id; the plan is approved
                 by such a comment

Per scenario: trials, jobs completed, batches committed, duplicate batch commits (a batch number
in more than one commit of the job on the remote branch, from the Stepwise-Batch trailers; plus
duplicate jobs, pull requests and marked comments), lost batches, stuck jobs (neither ended nor
at a gate after the timeout, 120 s, or at a gate whose comment never appeared), the median time
to recover (from the kill or the Redis restart to the job's next recorded progress: one more
finished batch, a gate or the end), the median time to finish against the no-fault control,
and the slowest gate: from its opening to its comment appearing on GitHub.
Exit status: 0 when no scenario has a duplicate, a lost batch, a stuck job or a gate shown later
than one reconciler interval, and every faulted scenario finishes within 3x its control.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis  # noqa: E402
import uvicorn  # noqa: E402
import yaml  # noqa: E402
from rq import Worker  # noqa: E402
from rq.registry import ScheduledJobRegistry  # noqa: E402

from bot.server.keys import lease_key  # noqa: E402
from bot.server.redis_store import RedisStore  # noqa: E402
from bot.server.worker import queue  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.web.app import create_app  # noqa: E402
from jobs.domain.model import BatchStatus, Job, JobStatus  # noqa: E402
from tests.kit.github import SECONDARY_RATE_LIMIT_MESSAGE, FakeGitHub  # noqa: E402
from tests.kit.github_api import Reply  # noqa: E402
from tests.kit.github_model import FakeRepo  # noqa: E402
from tests.kit.redis_server import free_port, redis_binary  # noqa: E402
from tests.kit.webhooks import deliver, make_event  # noqa: E402

STEPWISE = Path(sys.executable).parent / "stepwise"
OWNER = "octo-org"
MAINTAINER = "maria"
SECRET = "chaos-webhook-s3cret"
FILES = 12
VALIDATE = "python -m unittest discover -s tests -q"
LEASE_TTL_S = 2
REAP_INTERVAL_S = 1
BACKOFF_S = (0.5, 1.0, 2.0)
RECONCILE_INTERVAL_S = 5
CALL_BACKOFF_S = (0.2, 0.4, 0.8)  # a call's own retries (GitHub's Retry-After: 1 s still counts)
SHORT = {"STEPWISE_LEASE_TTL_S": str(LEASE_TTL_S), "STEPWISE_REAP_INTERVAL_S": str(REAP_INTERVAL_S),
         "STEPWISE_BACKOFF_S": json.dumps(list(BACKOFF_S)),
         "STEPWISE_CALL_BACKOFF_S": json.dumps(list(CALL_BACKOFF_S)),
         "STEPWISE_RECONCILE_INTERVAL_S": str(RECONCILE_INTERVAL_S)}
# The defaults of bot/settings.py: lease 30 s, reaper and reconciler every 20 s, 5/15/45 s.
PRODUCTION = {"STEPWISE_LEASE_TTL_S": "30", "STEPWISE_REAP_INTERVAL_S": "20",
              "STEPWISE_BACKOFF_S": "[5, 15, 45]", "STEPWISE_RECONCILE_INTERVAL_S": "20"}
STUCK_TIMEOUT_S = 120.0
MAX_SLOWDOWN = 3.0  # time to finish under faults against the no-fault control
PRODUCTION_STUCK_S = 600.0  # with 30 s leases and 45 s backoffs, give a job longer
WORKERS = 2
SCHEDULER_LOCK = "rq:scheduler-lock:stepwise"
TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.CANCELLED, JobStatus.FAILED})

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


# -- the sample repository ------------------------------------------------------------------------

LEGACY = '''"""Totals."""


def new_total(*values):
    return sum(values)


def old_total(*values):
    """Deprecated: use new_total()."""
    return new_total(*values)
'''

ISSUE_TITLE = "Move every caller of legacy.old_total() to legacy.new_total()"
ISSUE_BODY = """`old_total()` is deprecated.

```stepwise
recipe: replace
paths: ["app/**/*.py"]
exclude: ["app/legacy.py"]
find: ['\\bold_total\\(']
replace: 'new_total('
```
"""


def part_path(number: int) -> str:
    return f"app/part{number:02d}.py"


def sample_repo(*, files: int = FILES, require_plan_approval: bool = False,
                batches_per_milestone: int | None = None) -> dict[str, str | bytes]:
    """`files` modules each calling `legacy.old_total()` once, and a unittest suite over them;
    one batch per file, all in one milestone unless `batches_per_milestone` says otherwise."""
    config = {"validate": [VALIDATE], "allow_commands": ["python"], "batch_size": 1,
              "batches_per_milestone": batches_per_milestone or max(files, 12),
              "require_plan_approval": require_plan_approval,
              "ci": {"wait": "off"}}  # no CI here: with it on, each milestone waits out the grace
    tree: dict[str, str | bytes] = {
        "README.md": "# app\n",
        ".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False),
        "app/__init__.py": "",
        "app/legacy.py": LEGACY,
        "tests/__init__.py": "",
    }
    tests = ["import unittest", ""]
    for number in range(1, files + 1):
        tree[part_path(number)] = (f'"""Part {number}."""\n\nfrom app import legacy\n\n\n'
                                   f"def value():\n    return legacy.old_total({number}, 1)\n")
        tests.append(f"from app.part{number:02d} import value as value{number:02d}")
    tests += ["", "", "class PartsTest(unittest.TestCase):"]
    for number in range(1, files + 1):
        tests += [f"    def test_part{number:02d}(self):",
                  f"        self.assertEqual(value{number:02d}(), {number + 1})", ""]
    tree["tests/test_parts.py"] = "\n".join(tests) + "\n"
    return tree


# -- redis-server that can be restarted on the same port and directory ----------------------------

class RedisServer:
    """redis-server with the append-only file on, restartable in place."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        args = [redis_binary(), "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(self.data_dir),
                "--logfile", str(self.data_dir / "redis.log")]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis.from_url(self.url, socket_timeout=1)
        deadline = time.monotonic() + 15
        try:
            while True:
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}")
                time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        """SIGTERM: redis-server writes out the append-only file and exits (no SHUTDOWN)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


# -- a fake GitHub that also answers with real secondary rate limits -------------------------------

class ChaosGitHub(FakeGitHub):
    """FakeGitHub plus random faults: 502, or 403 with the secondary-rate-limit message and a
    Retry-After header. (The fake's own `fail_rate(statuses=(502, 403))` answers a plain
    `403 Forbidden`, which is a permission error, not a rate limit.)"""

    API = re.compile(r"^/(repos|graphql)")
    API_AND_TOKEN = re.compile(r"^/")  # every endpoint: token minting and comment posting too
    WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.fault_p = 0.0
        self.fault_rng = random.Random(0)
        self.fault_paths = self.API_AND_TOKEN
        self.faults: Counter[str] = Counter()
        self.slow_rules: list[list[Any]] = []
        self.slowed: list[str] = []  # requests being (or having been) answered late
        self._server.handle_error = self._client_gone  # type: ignore[method-assign]

    def _client_gone(self, request: Any, client_address: Any) -> None:
        """A killed worker's connection breaks mid-answer: expected here, not worth a trace."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super(type(self._server), self._server).handle_error(request, client_address)

    def slow(self, method: str, path_regex: str, seconds: float, *, times: int = 1) -> None:
        """Answer the next `times` matching requests `seconds` late (outside the fake's lock)."""
        self.slow_rules.append([method.upper(), re.compile(path_regex), seconds, times])

    def handle(self, method: str, target: str, headers: dict[str, str],
               body: bytes) -> tuple[int, dict[str, str], bytes]:
        for rule in self.slow_rules:
            if rule[3] > 0 and rule[0] == method and rule[1].search(target.split("?")[0]):
                rule[3] -= 1
                self.slowed.append(target)
                time.sleep(rule[2])
                break
        return super().handle(method, target, headers, body)

    def inject_faults(self, p: float, *, seed: int = 0, token_endpoint: bool = True) -> None:
        self.fault_p, self.fault_rng = p, random.Random(seed)
        self.fault_paths = self.API_AND_TOKEN if token_endpoint else self.API

    def _injected_after(self, method: str, path: str) -> Reply | None:
        """A third of the faults on writes come after the change was made ("done, then 502")."""
        reply = super()._injected_after(method, path)
        if reply is not None or self._pending_after is None:
            return reply
        where, self._pending_after = self._pending_after, None
        self.faults[f"502 after success ({where})"] += 1
        return Reply(502, {"message": "Server Error"})

    _pending_after: str | None = None

    def _injected(self, method: str, path: str) -> Reply | None:
        reply = super()._injected(method, path)
        if reply is not None or not self.fault_p or not self.fault_paths.search(path):
            return reply
        if self.fault_rng.random() >= self.fault_p:
            return None
        where = "token endpoint" if path.startswith("/app/") else "API"
        if method in self.WRITES and self.fault_rng.random() < 1 / 3:
            self._pending_after = where  # handled, then answered 502 (under the fake's lock)
            return None
        if self.fault_rng.random() < 0.5:
            self.faults[f"502 ({where})"] += 1
            return Reply(502, {"message": "Server Error"})
        self.faults[f"secondary rate limit ({where})"] += 1
        return Reply(403, {"message": SECONDARY_RATE_LIMIT_MESSAGE,
                           "documentation_url": "https://docs.github.com/rest"},
                     {"Retry-After": "1"})


# -- killing a worker like a machine going away ------------------------------------------------------

def wait_past_second_of(moment: datetime) -> None:
    """Until a comment written now has a GitHub timestamp (whole seconds) after `moment`, the
    gate's opening: `approve` answers only the gate open when the comment was written. The gate
    is usually seen a while after it opened, so this rarely waits at all."""
    time.sleep(max(0.0, int(moment.timestamp()) + 1.02 - time.time()))


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(entry)] = parent_of(int(entry))
    tree, frontier = [pid], {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        tree += sorted(frontier)
    return tree


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def kill_tree(pid: int, *, first: list[int] | None = None) -> None:
    """Freeze everything under `pid` (SIGSTOP: nothing forks, pushes or writes any more), walk
    the tree again until it stops growing, then SIGKILL it all and the process group. RQ puts
    the work-horse in a process group of its own and the sandbox starts new sessions, so killing
    the worker's group alone would let the step run on. `first` are frozen before the walk."""
    frozen: set[int] = set()
    if first:
        _signal(first, signal.SIGSTOP)
        frozen.update(first)
    for _ in range(20):
        new = set(descendants(pid)) - frozen
        if not new:
            break
        _signal(sorted(new), signal.SIGSTOP)
        frozen |= new
    _signal(sorted(frozen), signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# -- the workers ------------------------------------------------------------------------------------

@dataclass
class WorkerProc:
    number: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def tail(self, lines: int = 1) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line[-200:] for line in text[-lines:])


class Workers:
    """`stepwise worker` subprocesses (each the leader of a new session)."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.procs: list[WorkerProc] = []
        self.spawned = 0
        self.killed = 0
        self.exited: list[tuple[WorkerProc, int, str]] = []  # (worker, exit code, last line)

    def spawn(self) -> WorkerProc:
        self.spawned += 1
        log = self.log_dir / f"worker-{self.spawned:03d}.log"
        with log.open("wb") as out:
            process = subprocess.Popen([str(STEPWISE), "worker"], env=self.env, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       cwd=self.log_dir)
        proc = WorkerProc(self.spawned, process, log)
        self.procs.append(proc)
        return proc

    def alive(self) -> list[WorkerProc]:
        return [p for p in self.procs if p.process.poll() is None]

    def reap_exited(self) -> list[tuple[WorkerProc, int, str]]:
        """Workers that exited on their own since the last call (not the ones killed here)."""
        gone = []
        for proc in list(self.procs):
            code = proc.process.poll()
            if code is not None:
                self.procs.remove(proc)
                kill_tree(proc.pid)  # a scheduler or work-horse it left behind
                gone.append((proc, code, proc.tail()))
        self.exited.extend(gone)
        return gone

    def ensure(self, count: int = WORKERS) -> list[tuple[WorkerProc, int, str]]:
        """Restart workers that exited; returns those that had exited."""
        gone = self.reap_exited()
        while len(self.procs) < count:
            self.spawn()
        return gone

    def kill(self, proc: WorkerProc, *, first: list[int] | None = None) -> None:
        kill_tree(proc.pid, first=first)
        proc.process.wait(timeout=10)
        self.procs.remove(proc)
        self.killed += 1

    def stop_all(self) -> None:
        for proc in list(self.procs):
            kill_tree(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.process.wait(timeout=10)
        self.procs.clear()

    def busy_with(self, connection: redis.Redis, *needles: str) -> WorkerProc | None:
        """The worker whose current RQ job names one of `needles` (RQ ids carry the job id, and
        the delivery id for events)."""
        try:
            pids = {w.pid for w in Worker.all(queue=queue(connection))
                    if any(n and n in (w.get_current_job_id() or "") for n in needles)}
        except (redis.RedisError, ValueError):
            return None
        return next((p for p in self.procs if p.pid in pids and p.process.poll() is None), None)


# -- the whole installation -------------------------------------------------------------------------

@contextlib.contextmanager
def served(app: Any) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True, name="chaos-web")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class Cluster:
    """Redis, the fake GitHub, the web app and the workers; one repository per trial."""

    def __init__(self, root: Path, gh: ChaosGitHub, server: RedisServer, url: str,
                 workers: Workers, files: int) -> None:
        self.root, self.gh, self.redis_server, self.web_url = root, gh, server, url
        self.workers, self.files = workers, files
        self.redis = redis.Redis.from_url(server.url, socket_timeout=5)
        self.store = RedisStore(self.redis)
        self.repos = 0
        self.reconcile_s = float(RECONCILE_INTERVAL_S)

    def new_repo(self, label: str, *, require_plan_approval: bool = False,
                 batches_per_milestone: int | None = None) -> FakeRepo:
        self.repos += 1
        repo = self.gh.add_repo(OWNER, f"{label}-{self.repos:02d}", sample_repo(
            files=self.files, require_plan_approval=require_plan_approval,
            batches_per_milestone=batches_per_milestone))
        self.gh.add_issue(repo, ISSUE_TITLE, ISSUE_BODY, user=MAINTAINER)
        self.gh.set_permission(repo, MAINTAINER, "maintain")
        return repo

    def post(self, event: str, payload: dict[str, Any], *, delivery_id: str,
             copies: int = 1) -> list[int]:
        """Deliver `copies` identical requests at once (one X-GitHub-Delivery). A 5xx answer is
        redelivered a second later, as a maintainer would from the App's delivery log."""
        statuses: list[int] = [0] * copies

        def send(index: int) -> None:
            for _ in range(30):
                try:
                    response = deliver(self.web_url, event, payload, secret=SECRET,
                                       delivery_id=delivery_id)
                    statuses[index] = response.status_code
                    if response.status_code < 500:
                        return
                except httpx.HTTPError:
                    statuses[index] = -1
                time.sleep(1)

        threads = [threading.Thread(target=send, args=(i,)) for i in range(copies)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return statuses

    def label(self, repo: FakeRepo, *, copies: int = 1) -> list[int]:
        payload = make_event("issues.labeled", repo=repo, issue_number=1, sender=MAINTAINER,
                             label="stepwise")
        return self.post("issues", payload, delivery_id=label_delivery(repo), copies=copies)

    def comment(self, repo: FakeRepo, body: str, *, number: int = 1, copies: int = 1,
                redeliveries: int = 0) -> int:
        """A maintainer comments; the event is delivered `copies` times at once under one delivery
        id, then again under `redeliveries` more ids (the same comment seen again)."""
        posted = self.gh.add_comment(repo, number, body, user=MAINTAINER)
        payload = make_event("issue_comment.created", repo=repo, issue_number=number,
                             comment_body=body, comment_user=MAINTAINER, sender=MAINTAINER,
                             comment_id=posted.id)
        payload["comment"]["created_at"] = posted.created_at.astimezone(UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
        for round_ in range(1 + redeliveries):
            self.post("issue_comment", payload, delivery_id=f"comment-{posted.id}-{round_}",
                      copies=copies)
        return posted.id

    def job(self, repo: FakeRepo) -> Job | None:
        try:
            return self.store.find(repo.full_name, 1)
        except (redis.RedisError, ValueError):
            return None

    def ensure_workers(self) -> list[tuple[WorkerProc, int, str]]:
        return self.workers.ensure(WORKERS)

    def scheduler_holder(self) -> tuple[str, WorkerProc | None]:
        """Who holds RQ's scheduler lock (one worker runs the scheduler for the queue)."""
        try:
            name = self.redis.get(SCHEDULER_LOCK)
            if not name:
                return "nobody", None
            pid = self.redis.hget(f"rq:scheduler:{_text(name)}", "pid")
        except redis.RedisError:
            return "unknown (Redis unreachable)", None
        try:
            worker_pid = parent_of(int(pid or 0))
        except (OSError, ValueError, IndexError):
            return "a dead process", None
        proc = next((p for p in self.workers.procs if p.pid == worker_pid), None)
        return (f"worker {proc.number}", proc) if proc else ("a dead process", None)

    def wait_ready(self, timeout: float = 20.0, *, scheduler: bool = False) -> None:
        """Both workers registered with RQ (and, with `scheduler`, one of them running RQ's
        scheduler, as it does in a fresh installation)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError):
                live = {p.pid for p in self.workers.alive()}
                registered = {w.pid for w in Worker.all(queue=queue(self.redis))} & live
                if len(registered) >= WORKERS and (
                        not scheduler or self.scheduler_holder()[1] is not None):
                    return
            time.sleep(0.05)

    def diagnose(self, job: Job | None) -> str:
        """Why a job may be stuck: its lease, what is queued or scheduled, RQ's scheduler."""
        try:
            q = queue(self.redis)
            scheduled = ScheduledJobRegistry(queue=q).get_job_ids()  # type: ignore[no-untyped-call]
            queued = q.get_job_ids()
            lease = bool(job and self.redis.exists(lease_key(job.id)))
        except redis.RedisError as exc:
            return f"Redis unreachable: {exc}"
        ours = [i for i in scheduled if job and job.id in i]
        reaps = [i for i in scheduled if i.startswith("reap")]
        return (f"lease {'held' if lease else 'free'}; {len(queued)} queued; scheduled: "
                f"{len(ours)} for this job, {len(reaps)} reaper round(s); RQ scheduler lock "
                f"held by {self.scheduler_holder()[0]}")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def label_delivery(repo: FakeRepo) -> str:
    return f"label-{repo.name}"


@contextlib.contextmanager
def open_cluster(base: Path | None = None, *, files: int = FILES,
                 timings: dict[str, str] | None = None) -> Iterator[Cluster]:
    """A fresh installation: Redis, fake GitHub, web app, two workers. Its files are removed
    afterwards unless `base` is given (then the worker logs stay under base/logs)."""
    root = Path(tempfile.mkdtemp(prefix="stepwise-chaos-", dir=base))
    server = RedisServer(root / "redis")
    server.start()
    workers: Workers | None = None
    try:
        with ChaosGitHub(root=root / "github") as fake:
            gh = cast(ChaosGitHub, fake)
            env = {**os.environ,
                   "STEPWISE_APP_ID": str(gh.app_id), "STEPWISE_PRIVATE_KEY": gh.private_key_pem,
                   "STEPWISE_WEBHOOK_SECRET": SECRET, "STEPWISE_REDIS_URL": server.url,
                   "STEPWISE_GITHUB_API_URL": gh.base_url,
                   "STEPWISE_WORKDIR": str(root / "work"),
                   **(timings or SHORT),
                   "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
            settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                                webhook_secret=SECRET, redis_url=server.url,
                                github_api_url=gh.base_url, workdir=root / "work")
            logs = root / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            workers = Workers(env, logs)
            with served(create_app(settings, redis.Redis.from_url(server.url))) as url:
                cluster = Cluster(root, gh, server, url, workers, files)
                cluster.reconcile_s = float((timings or SHORT)["STEPWISE_RECONCILE_INTERVAL_S"])
                cluster.ensure_workers()
                cluster.wait_ready(scheduler=True)
                yield cluster
    finally:
        if workers is not None:
            workers.stop_all()
        server.stop()
        if base is None:
            shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def using(cluster: Cluster | None, base: Path | None, files: int) -> Iterator[Cluster]:
    """`cluster` when given (its workers made whole again), else a fresh one."""
    if cluster is None:
        with open_cluster(base, files=files) as fresh:
            yield fresh
        return
    cluster.ensure_workers()
    cluster.wait_ready()
    yield cluster


# -- watching a job ---------------------------------------------------------------------------------

@dataclass
class Sample:
    at: float
    status: JobStatus
    finished: int


def finished_count(job: Job) -> int:
    return sum(b.status in (BatchStatus.COMPLETED, BatchStatus.SKIPPED, BatchStatus.REVERTED)
               for b in job.batches)


class Watch:
    """Samples the job's record every 50 ms, in a thread with its own connection."""

    def __init__(self, cluster: Cluster, repo: FakeRepo) -> None:
        self.repo = repo
        self.store = RedisStore(redis.Redis.from_url(cluster.redis_server.url, socket_timeout=2))
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="chaos-watch")

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(redis.RedisError):
            self.store.redis.close()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                job = self.store.find(self.repo.full_name, 1)
            except (redis.RedisError, ValueError):
                continue
            if job is not None:
                self.samples.append(Sample(time.monotonic(), job.status, finished_count(job)))

    def progress_after(self, moment: float, finished: int) -> float | None:
        """Seconds from `moment` to the first sample with more than `finished` batches
        finished, or the job at a gate or ended."""
        for sample in self.samples:
            if sample.at > moment and (sample.finished > finished or sample.status in TERMINAL
                                       or sample.status is JobStatus.AWAITING_HUMAN):
                return sample.at - moment
        return None


OnGate = Callable[[Job, int], bool]


def gate_visible(repo: FakeRepo, job: Job) -> bool:
    """Whether the open gate's comment exists on GitHub (the issue or the pull request), which
    is all a maintainer who reacts to what Stepwise posts can go by."""
    gate = job.gate
    if gate is None:
        return False
    needle = f"Waiting at gate `{gate.kind.value}` ({gate.id})"
    return any(needle in comment.body for issue in list(repo.issues.values())
               for comment in list(issue.comments))


def wait_until_settled(cluster: Cluster, repo: FakeRepo, *, timeout: float,
                       on_gate: OnGate | None = None, tick: Callable[[], None] | None = None,
                       answer_within_s: float = 20.0,
                       shown: dict[str, float] | None = None) -> Job | None:
    """Wait until the job ends, or stops at a gate nobody answers. `on_gate(job, answers so
    far)` may answer the open gate (returns True when it commented); a gate still open
    `answer_within_s` after an answer is offered to it again. With `shown`, a gate is offered
    only once its comment exists on GitHub, and `shown[gate id]` records the seconds from its
    opening to its comment appearing (a gate never shown is missing there)."""
    deadline = time.monotonic() + timeout
    answered: dict[str, float] = {}
    answers: Counter[str] = Counter()
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        job = cluster.job(repo)
        if job is not None and job.status in TERMINAL:
            return job
        if job is not None and job.status is JobStatus.AWAITING_HUMAN and job.gate is not None:
            gate = job.gate.id
            if shown is not None:
                if gate not in shown and gate_visible(repo, job):
                    shown[gate] = max(0.0, time.time() - job.gate.opened_at.timestamp())
                if gate not in shown:
                    time.sleep(0.1)  # nothing on GitHub yet: the maintainer sees nothing
                    continue
            if gate not in answered or time.monotonic() - answered[gate] > answer_within_s:
                if on_gate is None or not on_gate(job, answers[gate]):
                    return job
                answers[gate] += 1
                answered[gate] = time.monotonic()
                deadline = max(deadline, time.monotonic() + answer_within_s + 5)
        time.sleep(0.1)
    return cluster.job(repo)


# -- checking a finished trial ----------------------------------------------------------------------

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
    late: int = 0  # gates shown later than one reconciler interval after they opened

    @property
    def completed(self) -> bool:
        return self.status == JobStatus.COMPLETED.value

    def line(self) -> str:
        recover = ",".join(f"{r:.1f}" for r in self.recover_s) or "-"
        extra = (f" gates-shown-in={','.join(f'{g:.1f}' for g in self.shown_s)}s"
                 if self.shown_s else "") + (f" UNSEEN={self.unseen}" if self.unseen else "") + \
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


# -- scenario results -------------------------------------------------------------------------------

@dataclass
class ScenarioResult:
    name: str
    trials: list[Trial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reference_s: float | None = None  # the no-fault control's time to finish
    reconcile_s: float | None = None  # the reconciler interval (gate scenarios)

    @property
    def finish_s(self) -> float | None:
        """Median time to finish of the trials that completed."""
        done = [t.seconds for t in self.trials if t.completed]
        return statistics.median(done) if done else None

    @property
    def ratio(self) -> float | None:
        finish = self.finish_s
        return finish / self.reference_s if finish and self.reference_s else None

    @property
    def slowest_shown(self) -> float | None:
        shown = [g for t in self.trials for g in t.shown_s]
        return max(shown) if shown else None

    @property
    def completed(self) -> int:
        return sum(t.completed for t in self.trials)

    @property
    def committed(self) -> int:
        return sum(t.committed for t in self.trials)

    @property
    def duplicates(self) -> int:
        return sum(t.duplicates + len(t.other_duplicates) for t in self.trials)

    @property
    def lost(self) -> int:
        return sum(len(t.lost) for t in self.trials)

    @property
    def stuck(self) -> int:
        return sum(t.stuck for t in self.trials)

    @property
    def recoveries(self) -> list[float]:
        return [r for t in self.trials for r in t.recover_s]

    @property
    def median_recover(self) -> float | None:
        return statistics.median(self.recoveries) if self.recoveries else None

    @property
    def ended_otherwise(self) -> str:
        """How the jobs that did not complete ended (e.g. `failed 2, failure gate 1`)."""
        counts = Counter((f"{t.gate} gate" if t.gate else t.status) for t in self.trials
                         if not t.completed)
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"

    @property
    def late(self) -> int:
        return sum(t.late for t in self.trials)

    @property
    def ok(self) -> bool:
        """0 duplicates, 0 lost, 0 stuck, every gate shown within one reconciler interval,
        and a faulted scenario finishing within 3× its no-fault control."""
        slow = self.ratio is not None and self.name != "baseline" and self.ratio > MAX_SLOWDOWN
        return self.duplicates == 0 and self.lost == 0 and self.stuck == 0 and \
            self.late == 0 and not slow


def _seconds(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else "-"


HEADER = (f"{'scenario':<14} {'trials':>6} {'completed':>9} {'batches':>8} {'duplicate':>9} "
          f"{'lost':>5} {'stuck':>5} {'recover p50':>11} {'recover max':>11} {'finish':>8} "
          f"{'x base':>7} {'gate shown':>10}  not completed")


def table_line(r: ScenarioResult) -> str:
    worst = max(r.recoveries) if r.recoveries else None
    return (f"{r.name:<14} {len(r.trials):>6} {r.completed:>9} {r.committed:>8} "
            f"{r.duplicates:>9} {r.lost:>5} {r.stuck:>5} {_seconds(r.median_recover):>11} "
            f"{_seconds(worst):>11} {_seconds(r.finish_s):>8} {_ratio(r.ratio):>7} "
            f"{_seconds(r.slowest_shown):>10}  {r.ended_otherwise}")


def _ratio(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "-"


def markdown_table(results: list[ScenarioResult]) -> str:
    lines = ["| scenario | trials | jobs completed | batches committed | duplicate batch commits "
             "| lost batches | stuck jobs | median time to recover | slowest recovery "
             "| median time to finish | × no-fault | slowest gate shown | jobs not completed |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        worst = max(r.recoveries) if r.recoveries else None
        lines.append(f"| {r.name} | {len(r.trials)} | {r.completed} | {r.committed} | "
                     f"{r.duplicates} | {r.lost} | {r.stuck} | {_seconds(r.median_recover)} | "
                     f"{_seconds(worst)} | {_seconds(r.finish_s)} | {_ratio(r.ratio)} | "
                     f"{_seconds(r.slowest_shown)} | {r.ended_otherwise} |")
    return "\n".join(lines)


# -- scenarios ---------------------------------------------------------------------------------------

def run_baseline(*, files: int = FILES, stuck_timeout_s: float = STUCK_TIMEOUT_S,
                 base: Path | None = None, cluster: Cluster | None = None,
                 log: Log = _quiet) -> ScenarioResult:
    """One job with no faults: the control, and the expected duration of a job."""
    result = ScenarioResult("baseline")
    with using(cluster, base, files) as cluster:
        repo = cluster.new_repo("baseline")
        trial = Trial("baseline", repo.name)
        started = time.monotonic()
        cluster.label(repo)
        job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
        trial.seconds = time.monotonic() - started
        result.trials.append(check(cluster, repo, trial, job))
    log(trial.line())
    return result


def _ref_path(repo: FakeRepo, branch: str) -> Path:
    return repo.path / "refs" / "heads" / branch


def _read_ref(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _allowed(cluster: Cluster, proc: WorkerProc | None, prefer: str | None) -> bool:
    """Whether `proc` may be the victim: `prefer` "scheduler" wants the worker running RQ's
    scheduler, "other" spares it, None takes any."""
    if proc is None or prefer is None:
        return proc is not None
    holds = cluster.scheduler_holder()[1] is proc
    return holds if prefer == "scheduler" else not holds


def _victim(cluster: Cluster, repo: FakeRepo, job_id: str | None, rng: random.Random, *,
            prefer: str | None, wait_s: float) -> tuple[WorkerProc, list[int]]:
    """The worker advancing the job (or handling its label), and its processes, frozen; waits
    up to `wait_s` for one that is busy with it (and allowed by `prefer`), else picks an allowed
    one at random (not frozen). A busy worker is frozen, then asked again: one that finished its
    step in between is let go and waited for again, so "busy" is true at the kill."""
    needles = (job_id or "", label_delivery(repo))
    deadline = time.monotonic() + wait_s
    while True:
        busy = cluster.workers.busy_with(cluster.redis, *needles)
        if _allowed(cluster, busy, prefer):
            assert busy is not None
            tree = [busy.pid, *descendants(busy.pid)]
            _signal(tree, signal.SIGSTOP)
            if cluster.workers.busy_with(cluster.redis, *needles) is busy:
                return busy, tree
            _signal(tree, signal.SIGCONT)
        if time.monotonic() > deadline:
            break
        time.sleep(0.005)
    alive = cluster.workers.alive()
    return rng.choice([p for p in alive if _allowed(cluster, p, prefer)] or alive), []


def _kill_after_push(cluster: Cluster, repo: FakeRepo, ref: Path, target: int, *,
                     prefer: str | None, timeout: float) -> tuple[WorkerProc | None, list[int]]:
    """Poll the remote branch every 0.5 ms; from the `target`-th push on, freeze the process
    tree of the worker advancing the job the moment the branch moves (a thread keeps track of
    that worker and its processes). Returns the frozen worker (killed by the caller)."""
    current: list[tuple[WorkerProc, list[int]] | None] = [None]
    stop = threading.Event()

    def follow() -> None:
        job_id = ""
        while not stop.wait(0.03):
            if not job_id:
                job = cluster.job(repo)
                job_id = job.id if job else ""
                if not job_id:
                    continue
            busy = cluster.workers.busy_with(cluster.redis, job_id)
            if not _allowed(cluster, busy, prefer):
                busy = None
            with contextlib.suppress(OSError):
                current[0] = (busy, descendants(busy.pid)) if busy is not None else None

    thread = threading.Thread(target=follow, daemon=True, name="chaos-follow")
    thread.start()
    try:
        pushes, last = 0, _read_ref(ref)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head = _read_ref(ref)
            if head and head != last:
                last, pushes = head, pushes + 1
                seen = current[0]
                if pushes >= target and seen is not None and seen[0].process.poll() is None:
                    _signal(seen[1], signal.SIGSTOP)  # at once; the walk comes after
                    return seen
            if pushes and pushes >= target and current[0] is None:
                job = cluster.job(repo)
                if job is not None and job.status in TERMINAL:
                    return None, []
            time.sleep(0.0005)
        return None, []
    finally:
        stop.set()
        thread.join(timeout=5)


def kill_trial(index: int, expected_s: float, rng: random.Random, *, after_push: bool,
               restart: bool = True, prefer: str | None = None, wait_for_job: bool = False,
               slow_steps_s: float = 0.0, files: int = FILES,
               stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
               cluster: Cluster | None = None, scenario: str = "kill",
               log: Log = _quiet) -> Trial:
    """One job on a fresh installation; the worker advancing it is killed once (at a random
    moment, or right after the remote branch moved: between a push and its record write) and
    restarted at once, or (`restart=False`) only after the job settled, so the surviving worker
    must finish it. `prefer` "scheduler" kills only the worker running RQ's scheduler, "other"
    never kills that one, None kills whichever advances the job. `wait_for_job` holds the kill
    until the label became a job record. `slow_steps_s` delays the repository read that opens
    every step, so a kill is sure to land inside a step. Without `cluster` the trial gets a
    fresh installation."""
    with using(cluster, base, files) as cluster:
        repo = cluster.new_repo(f"{scenario}{index:02d}")
        trial = Trial(scenario, repo.name)
        ref = _ref_path(repo, "stepwise/issue-1")
        if slow_steps_s:
            cluster.gh.slow("GET", rf"/repos/{repo.full_name}$", slow_steps_s, times=1000)
        victim: WorkerProc | None = None
        frozen_first: list[int] = []
        job_id: str | None = None
        job: Job | None = None
        with Watch(cluster, repo) as watch:
            started = time.monotonic()
            cluster.label(repo)
            if after_push:
                target = rng.randint(1, files)
                trial.notes.append(f"kill right after push {target}")
                victim, frozen_first = _kill_after_push(cluster, repo, ref, target,
                                                        prefer=prefer, timeout=stuck_timeout_s)
                job = cluster.job(repo)
                job_id = job.id if job else None
            else:
                delay = rng.uniform(0.0, expected_s * (0.3 if prefer == "scheduler" else 1.0))
                trial.notes.append(f"kill at {delay:.1f}s")
                time.sleep(max(0.0, started + delay - time.monotonic()))
                job = cluster.job(repo)
                while wait_for_job and job is None and time.monotonic() - started < 30:
                    time.sleep(0.01)
                    job = cluster.job(repo)
                job_id = job.id if job else None
                if job is not None and job.status in TERMINAL:
                    trial.notes.append("the job had already ended")
                else:
                    victim, frozen_first = _victim(cluster, repo, job_id, rng, prefer=prefer,
                                                   wait_s=30.0 if prefer else 2.0)
            if victim is not None:
                held = cluster.scheduler_holder()[1] is victim
                what = cluster.workers.busy_with(cluster.redis, job_id or "-",
                                                 label_delivery(repo)) is victim
                cluster.workers.kill(victim, first=frozen_first)
                killed_at = time.monotonic()
                job = cluster.job(repo)
                before = finished_count(job) if job else 0
                state = f"job {job.status}, {before} done" if job else "no job record yet"
                trial.notes.append(f"killed {'busy' if what else 'idle'} worker {victim.number} "
                                   f"({state}{'; it ran the RQ scheduler' if held else ''})")
                if job is not None:
                    on_branch = set(branch_batches(repo, job.branch, job.id))
                    recorded = {b.number for b in job.batches
                                if b.status is BatchStatus.COMPLETED}
                    if on_branch - recorded:
                        trial.notes.append(
                            f"pushed, not recorded: batch {sorted(on_branch - recorded)}")
                active = job is None or (job.status not in TERMINAL
                                         and job.status is not JobStatus.AWAITING_HUMAN)
                if restart:
                    cluster.ensure_workers()
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
                recovered = watch.progress_after(killed_at, before)
                if recovered is not None and active:
                    trial.recover_s.append(recovered)
            else:
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s)
            trial.seconds = time.monotonic() - started
        check(cluster, repo, trial, job)
    log(trial.line())
    return trial


def run_kill(trials: int, *, expected_s: float, seed: int = 1, files: int = FILES,
             stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
             cluster: Cluster | None = None, log: Log = _quiet) -> ScenarioResult:
    """`trials` jobs, each with one worker killed and restarted at once; every third kill comes
    right after a push. Each trial gets a fresh installation unless `cluster` is given."""
    rng = random.Random(seed)
    result = ScenarioResult("kill")
    for index in range(trials):
        result.trials.append(kill_trial(
            index + 1, expected_s, rng, after_push=index % 3 == 2, files=files,
            stuck_timeout_s=stuck_timeout_s, base=base, cluster=cluster, log=log))
    _kill_notes(result)
    return result


def run_kill_survivor(trials: int, *, expected_s: float, seed: int = 4, files: int = FILES,
                      stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                      log: Log = _quiet) -> ScenarioResult:
    """The worker advancing the job is killed and not restarted: the surviving worker must
    finish the job. Odd trials kill the worker running RQ's scheduler, even ones the other."""
    rng = random.Random(seed)
    result = ScenarioResult("kill-survivor")
    for index in range(trials):
        result.trials.append(kill_trial(
            index + 1, expected_s, rng, after_push=False, restart=False,
            prefer="scheduler" if index % 2 == 0 else "other", wait_for_job=True, files=files,
            stuck_timeout_s=stuck_timeout_s, base=base, scenario="survivor", log=log))
    _kill_notes(result)
    return result


def run_kill_label(trials: int = 2, *, files: int = FILES,
                   stuck_timeout_s: float = STUCK_TIMEOUT_S, redeliver_after_s: float = 10.0,
                   base: Path | None = None, log: Log = _quiet) -> ScenarioResult:
    """The worker handling the `labeled` webhook is killed mid-event and restarted at once.
    Odd trials kill it while it waits for a GitHub call (the fake answers the issue read 3 s
    late, so the moment is certain); even ones the moment it starts the repository's first
    clone (the mirror directory appearing, polled every 0.5 ms). When no job appeared
    `redeliver_after_s` later, the maintainer redelivers the webhook from the App's delivery
    log (same delivery id)."""
    result = ScenarioResult("kill-label")
    for index in range(trials):
        with open_cluster(base, files=files) as cluster:
            repo = cluster.new_repo(f"label{index + 1:02d}")
            trial = Trial(result.name, repo.name)
            during_clone = index % 2 == 1
            mirror = cluster.root / "work" / "repos" / repo.owner / f"{repo.name}.git"
            if not during_clone:
                cluster.gh.slow("GET", rf"/repos/{repo.full_name}/issues/1$", 3.0)
            started = time.monotonic()
            cluster.label(repo)
            victim = None
            while victim is None and time.monotonic() - started < 10:
                victim = cluster.workers.busy_with(cluster.redis, label_delivery(repo))
                time.sleep(0.002)
            tree = descendants(victim.pid) if victim is not None else []
            deadline = time.monotonic() + 10
            while victim is not None and time.monotonic() < deadline:
                if during_clone and any(mirror.parent.glob(f"{mirror.name}*")):
                    break  # the clone's directory (or its `.partial-<pid>` beside) appeared
                if not during_clone and cluster.gh.slowed:
                    time.sleep(0.5)  # inside the late answer
                    break
                time.sleep(0.0005)
            if victim is not None:
                cluster.workers.kill(victim, first=tree)
                made = sorted(mirror.parent.glob(f"{mirror.name}*")) if during_clone else []
                left = {d.name: sorted(p.name for p in d.iterdir()) for d in made if d.is_dir()}
                trial.notes.append(
                    f"killed worker {victim.number} "
                    + (f"as the first clone began (it left {left})" if during_clone
                       else "while it waited for GitHub")
                    + ("; a job record exists" if cluster.job(repo) else "; no job yet"))
                cluster.ensure_workers()
            job = wait_until_settled(cluster, repo, timeout=redeliver_after_s)
            if job is None:
                payload = make_event("issues.labeled", repo=repo, issue_number=1,
                                     sender=MAINTAINER, label="stepwise")
                answer = deliver(cluster.web_url, "issues", payload, secret=SECRET,
                                 delivery_id=label_delivery(repo))
                trial.notes.append(f"redelivered: {answer.status_code} {answer.text[:60]}")
            # A job that exists but is still working gets the rest of the time budget.
            job = wait_until_settled(cluster, repo, timeout=max(
                1.0, stuck_timeout_s - (time.monotonic() - started)))
            trial.seconds = time.monotonic() - started
            check(cluster, repo, trial, job)
            if job is None:
                errors = [line for proc in cluster.workers.procs for line in
                          proc.log.read_text(errors="replace").splitlines() if "Error:" in line]
                if errors:
                    trial.notes.append(f"last worker error: {errors[-1][-220:]}")
        log(trial.line())
        result.trials.append(trial)
    return result


def _kill_notes(result: ScenarioResult) -> None:
    window = sum(any(n.startswith("pushed, not recorded") for n in t.notes)
                 for t in result.trials)
    holders = [t for t in result.trials if any("ran the RQ scheduler" in n for n in t.notes)]
    result.notes.append(f"{window} kill(s) landed between a push and its record write")
    result.notes.append(f"{len(holders)} kill(s) hit the worker running RQ's scheduler; "
                        f"{sum(t.stuck for t in holders)} of those jobs got stuck, "
                        f"{sum(t.stuck for t in result.trials if t not in holders)} others")


def run_redis_restart(trials: int = 1, *, expected_s: float, seed: int = 2,
                      downtime_s: float = 1.0, files: int = FILES,
                      stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                      cluster: Cluster | None = None, log: Log = _quiet) -> ScenarioResult:
    """Mid-job, SIGTERM redis-server and start it again on the same port and directory; restart
    the workers that exited because they lost Redis."""
    rng = random.Random(seed)
    result = ScenarioResult("redis-restart")
    shared = cluster
    for index in range(trials):
        with using(shared, base, files) as cluster:
            repo = cluster.new_repo(f"redis{index + 1:02d}")
            trial = Trial("redis-restart", repo.name)
            exits: list[str] = []

            def tick(cluster: Cluster = cluster, exits: list[str] = exits) -> None:
                for proc, code, tail in cluster.ensure_workers():
                    exits.append(f"worker {proc.number} exited with {code}: {tail[-150:]}")

            with Watch(cluster, repo) as watch:
                started = time.monotonic()
                cluster.label(repo)
                moment = rng.uniform(0.3, 0.7) * expected_s
                time.sleep(max(0.0, started + moment - time.monotonic()))
                cluster.redis_server.stop()
                time.sleep(downtime_s)
                cluster.redis_server.start()
                restarted_at = time.monotonic()
                job = cluster.job(repo)  # what the append-only file kept
                before = finished_count(job) if job else 0
                trial.notes.append(f"Redis down at {moment:.1f}s for {downtime_s:.0f}s "
                                   f"({before} batches done)")
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, tick=tick)
                recovered = watch.progress_after(restarted_at, before)
                if recovered is not None:
                    trial.recover_s.append(recovered)
                trial.seconds = time.monotonic() - started
            trial.notes.append(f"{len(exits)} worker(s) exited and were restarted"
                               if exits else "no worker exited")
            trial.notes.append(f"RQ scheduler lock afterwards held by "
                               f"{cluster.scheduler_holder()[0]}")
            result.notes += exits
            check(cluster, repo, trial, job)
        log(trial.line())
        result.trials.append(trial)
    return result


def run_faults(trials: int = 1, *, rate: float = 0.2, seed: int = 3, token_endpoint: bool = True,
               files: int = FILES, stuck_timeout_s: float = STUCK_TIMEOUT_S,
               base: Path | None = None, cluster: Cluster | None = None, name: str | None = None,
               timings: dict[str, str] | None = None, log: Log = _quiet) -> ScenarioResult:
    """`rate` of GitHub calls fail: 502 or a secondary rate limit before the call is handled,
    or (a third of the faults on writes) 502 after it was (every endpoint, the token endpoint
    and comment posting included, unless `token_endpoint=False`). Each job stops at the plan
    gate and at a milestone gate; the maintainer answers a gate only once its comment exists
    on GitHub (approve; `/stepwise retry` at a failure gate from a transient fault)."""
    result = ScenarioResult(name or ("faults" if token_endpoint else "faults-api"))
    fresh = contextlib.nullcontext(cluster) if cluster is not None and timings is None else \
        open_cluster(base, files=files, timings=timings)
    with fresh as opened:
        cluster = opened
        cluster.ensure_workers()
        cluster.wait_ready()
        cluster.gh.faults.clear()
        for index in range(trials):
            repo = cluster.new_repo(f"{result.name}{index + 1:02d}", require_plan_approval=True,
                                    batches_per_milestone=max(1, files // 2))
            trial = Trial(result.name, repo.name)
            answers: list[str] = []
            shown: dict[str, float] = {}

            def on_gate(job: Job, tries: int, repo: FakeRepo = repo,
                        answers: list[str] = answers) -> bool:
                gate = job.gate
                if gate is None or tries >= 3:
                    return False
                if gate.kind.value in ("plan", "milestone"):
                    verb = "approve"
                elif gate.kind.value == "failure" and gate.report is not None and \
                        gate.report.retry_class.value == "auto_retry":
                    verb = "retry"
                else:
                    return False
                wait_past_second_of(gate.opened_at)
                answers.append(f"{verb}@{gate.kind.value}")
                cluster.comment(repo, f"/stepwise {verb}")
                return True

            cluster.gh.inject_faults(rate, seed=seed + index, token_endpoint=token_endpoint)
            try:
                started = time.monotonic()
                cluster.label(repo)
                job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, on_gate=on_gate,
                                         shown=shown)
                trial.seconds = time.monotonic() - started
            finally:
                cluster.gh.inject_faults(0.0)
            trial.notes.append(f"answers: {', '.join(answers) or 'none'}")
            check(cluster, repo, trial, job)
            trial.shown_s = list(shown.values())
            if job is not None and job.gate is not None and job.gate.id not in shown:
                trial.unseen.append(job.gate.id)
                trial.stuck = True  # a gate nobody can see: the maintainer waits forever
            late = [g for g in trial.shown_s if g > cluster.reconcile_s]
            if late:
                trial.late = len(late)
                trial.notes.append(f"{len(late)} gate(s) shown later than one reconciler "
                                   f"interval ({cluster.reconcile_s:.0f} s)")
            log(trial.line())
            result.trials.append(trial)
        result.reconcile_s = cluster.reconcile_s
        result.notes.append("faults injected: " + (", ".join(
            f"{k} {v}" for k, v in sorted(cluster.gh.faults.items())) or "none"))
    return result


def run_duplicates(trials: int = 1, *, files: int = FILES,
                   stuck_timeout_s: float = STUCK_TIMEOUT_S, base: Path | None = None,
                   cluster: Cluster | None = None, log: Log = _quiet) -> ScenarioResult:
    """Every webhook twice at once (one delivery id), every command comment once more under a
    second delivery id; the plan gate is approved by such a comment."""
    result = ScenarioResult("duplicates")
    with using(cluster, base, files) as cluster:
        for index in range(trials):
            repo = cluster.new_repo(f"dups{index + 1:02d}", require_plan_approval=True)
            trial = Trial("duplicates", repo.name)
            approvals: list[int] = []

            def on_gate(job: Job, tries: int, repo: FakeRepo = repo,
                        approvals: list[int] = approvals) -> bool:
                if job.gate is None or job.gate.kind.value != "plan" or tries >= 2:
                    return False
                wait_past_second_of(job.gate.opened_at)
                approvals.append(cluster.comment(repo, "/stepwise approve", copies=2,
                                                 redeliveries=1))
                return True

            started = time.monotonic()
            cluster.label(repo, copies=2)
            job = wait_until_settled(cluster, repo, timeout=stuck_timeout_s, on_gate=on_gate)
            trial.seconds = time.monotonic() - started
            check(cluster, repo, trial, job)
            comments = {c.id: c for c in repo.issues[1].comments}
            reactions = [len(comments[i].reactions) for i in approvals]
            answered_to = Counter(m.group(2) for c in comments.values()
                                  for m in MARKER.finditer(c.body) if "reply" in m.group(2))
            trial.notes.append(f"{len(approvals)} approval comment(s) delivered 4 times each; "
                               f"reactions {reactions}; replies {dict(answered_to) or 0}")
            if any(count > 1 for count in reactions):
                trial.other_duplicates.append(f"reactions {reactions} on one comment")
            log(trial.line())
            result.trials.append(trial)
    return result


# -- the command --------------------------------------------------------------------------------------

@dataclass
class Plan:
    kill_trials: int = 20
    redis_trials: int = 3
    survivor_trials: int = 4
    label_trials: int = 2
    fault_trials: int = 5
    duplicate_trials: int = 3
    faults_api: bool = True
    production: bool = True
    kills: bool = True  # baseline, kill, kill-survivor, kill-label, redis-restart


def run_all(plan: Plan, *, seed: int = 1, base: Path | None = None,
            log: Log = print) -> list[ScenarioResult]:
    results: list[ScenarioResult] = []
    if plan.kills:
        results.append(run_baseline(base=base, log=log))
        results[0].reference_s = results[0].finish_s
        first = results[0].trials[0]
        expected = first.seconds if first.completed else 15.0
        log(f"expected job duration (baseline): {expected:.1f} s")
        results.append(run_kill(plan.kill_trials, expected_s=expected, seed=seed, base=base,
                                log=log))
        if plan.survivor_trials:
            results.append(run_kill_survivor(plan.survivor_trials, expected_s=expected,
                                             seed=seed + 3, base=base, log=log))
        if plan.label_trials:
            results.append(run_kill_label(plan.label_trials, base=base, log=log))
        results.append(run_redis_restart(plan.redis_trials, expected_s=expected, seed=seed + 1,
                                         base=base, log=log))
    control = run_faults(1, rate=0.0, name="no-faults", base=base, log=log)
    results.append(control)
    faulted = [run_faults(plan.fault_trials, seed=seed + 2, base=base, log=log)]
    if plan.faults_api:
        faulted.append(run_faults(plan.fault_trials, seed=seed + 2, token_endpoint=False,
                                  base=base, log=log))
    if plan.production:
        faulted.append(run_faults(1, seed=seed + 5, name="faults-prod", timings=PRODUCTION,
                                  stuck_timeout_s=PRODUCTION_STUCK_S, base=base, log=log))
    for result in faulted:
        result.reference_s = control.finish_s
    results += faulted
    results.append(run_duplicates(plan.duplicate_trials, base=base, log=log))
    return results


def machine() -> str:
    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Stepwise chaos run (see the module docstring).")
    parser.add_argument("--trials", type=int, default=None, help="kill trials (default 20)")
    parser.add_argument("--quick", action="store_true",
                        help="3 kill trials, redis-restart, faults and duplicates once "
                        "(kill-survivor, kill-label and faults-api left out)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each installation's files and worker logs under this directory")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    parser.add_argument("--verbose", action="store_true", help="print a line per trial")
    parser.add_argument("--faults-only", action="store_true",
                        help="only no-faults, faults, faults-api, faults-prod and duplicates")
    args = parser.parse_args(argv)
    plan = Plan(kill_trials=3, redis_trials=1, survivor_trials=0, label_trials=0, fault_trials=1,
                duplicate_trials=1, faults_api=False, production=False) if args.quick else Plan()
    if args.trials is not None:
        plan.kill_trials = args.trials
    plan.kills = not args.faults_only
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"stepwise chaos run: {machine()}", flush=True)
    print(f"lease {LEASE_TTL_S} s, reaper every {REAP_INTERVAL_S} s, reconciler every "
          f"{RECONCILE_INTERVAL_S} s, backoff {list(BACKOFF_S)} s, call retries "
          f"{list(CALL_BACKOFF_S)} s, {WORKERS} workers, {FILES}-batch jobs, stuck after "
          f"{STUCK_TIMEOUT_S:.0f} s (faults-prod: the production settings {PRODUCTION})",
          flush=True)

    def log(text: str) -> None:
        if args.verbose or not text.startswith("  "):
            print(text, flush=True)

    results = run_all(plan, seed=args.seed, base=args.keep, log=log)
    print()
    print(HEADER)
    for result in results:
        print(table_line(result))
    print()
    for result in results:
        for note in result.notes:
            print(f"{result.name}: {note}")
        for trial in result.trials:
            if not args.verbose and (trial.other_duplicates or trial.lost or trial.stuck
                                     or not trial.completed):
                print(trial.line())
    if args.markdown:
        print()
        print(markdown_table(results))
    print(f"\ntotal {time.monotonic() - started:.0f} s")
    failed = [r.name for r in results if not r.ok]
    if failed:
        print(f"FAILED: duplicates, lost batches, stuck jobs, late gates or a slowdown over "
              f"{MAX_SLOWDOWN:.0f}x in: {', '.join(failed)}")
        return 1
    print(f"OK: 0 duplicates, 0 lost batches, 0 stuck jobs, every gate shown within one "
          f"reconciler interval, faulted jobs within {MAX_SLOWDOWN:.0f}x the no-fault control")
    return 0


if __name__ == "__main__":
    sys.exit(main())
