"""The `stepwise worker` processes of a chaos installation: started, restarted, their logs."""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

import redis
from rq import Worker

from bot.plumbing.queue import queue
from tests.kit.chaos.killing import kill_tree
from tests.kit.chaos.settings import STEPWISE, WORKERS


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
