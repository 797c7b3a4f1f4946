"""The cost of two flows in files and calls (issue 29's "flow cost"), from a call trace.

    .venv/bin/python -m bench.flow_trace [--flow approve|local|both]

- `approve`: server mode, from a maintainer's `/stepwise approve` at the plan gate to the first
  batch pushed (and the next gate shown): the App against the fake GitHub, a real redis-server,
  the worker's tasks run in this process by RQ's SimpleWorker; only the worker is traced.
- `local`: `stepwise run --yes` on the sample repository (three batches, two milestones) to the
  change note, through the CLI in this process.

Each figure counts Stepwise's own code (modules under jobs/ and bot/): the files whose functions
ran, the calls from a function of one file into a function of another, the record loads,
status reads and saves (the stores' `load`/`load_id`, `stored_status` and `save` calls) and the
task spec's validations (each runs `TaskSpec`'s recipe check). It also counts the lines of the
files crossed, and so the fewest files that could hold them at STYLE.md's "modules under about
300 lines" (a floor for the file count that no regrouping of the same code goes under).

Run it on an older checkout (same interpreter, the checkout as the working directory) to
compare; it uses only interfaces older versions have.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path.cwd().resolve()
OURS = (str(ROOT / "jobs") + "/", str(ROOT / "bot") + "/")
# Where the stores and the spec's recipe check live, now and in older checkouts (compared with).
STORES = ("jobs/adapters/store.py", "bot/plumbing/redis_store.py", "bot/server/redis_store.py")
SPECS = ("jobs/inputs/spec.py", "jobs/domain/spec.py")
MODULE_LINES = 300  # STYLE.md: modules under about 300 lines


@dataclass
class Trace:
    """What one traced flow did in Stepwise's code."""

    files: set[str] = field(default_factory=set)
    cross_calls: int = 0
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        callee = frame.f_code.co_filename
        if not callee.startswith(OURS):
            return
        name = callee[len(str(ROOT)) + 1:]
        self.files.add(name)
        self.calls[(name, frame.f_code.co_name)] += 1
        caller = frame.f_back.f_code.co_filename if frame.f_back is not None else ""
        if caller != callee and caller.startswith(OURS):
            self.cross_calls += 1

    def count(self, files: tuple[str, ...], *names: str) -> int:
        return sum(n for (file, name), n in self.calls.items() if file in files and name in names)

    def report(self, label: str, *, list_files: bool = False) -> str:
        loads = self.count(STORES, "load", "load_id")  # find and reload go through these
        statuses = self.count(STORES, "stored_status")
        saves = self.count(STORES, "save")  # save_unsynced goes through it
        specs = self.count(SPECS, "_registered_recipe")
        lines = sum(len((ROOT / name).read_text().splitlines()) for name in self.files)
        listing = ""
        if list_files:
            listing = "\n" + "\n".join(f"  {f}" for f in sorted(self.files))
        return (f"{label}: {len(self.files)} files, {self.cross_calls} cross-file calls, "
                f"{loads} record loads, {statuses} status reads, {saves} saves, "
                f"{specs} spec validations; {lines} lines in those files, so at least "
                f"{-(-lines // MODULE_LINES)} files of {MODULE_LINES} lines{listing}")


@contextmanager
def traced() -> Iterator[Trace]:
    trace = Trace()
    sys.setprofile(trace.profile)
    try:
        yield trace
    finally:
        sys.setprofile(None)


def local_flow() -> Trace:
    from typer.testing import CliRunner

    from bot.cli.main import app
    from tests.kit.local_e2e import build_sample, write_issue

    with tempfile.TemporaryDirectory(prefix="flow-trace-") as tmp:
        repo = build_sample(Path(tmp) / "repo")
        issue = write_issue(Path(tmp) / "issue.md")
        runner = CliRunner()
        with traced() as trace:
            result = runner.invoke(app, ["run", "--repo", str(repo), "--issue", str(issue),
                                         "--yes"])
        if result.exit_code != 0:
            raise RuntimeError(f"run --yes exited {result.exit_code}: {result.output[-2000:]}")
        return trace


ISSUE_BODY = """Move every caller of `old_sum()` to `new_sum()`.

```stepwise
recipe: replace
paths: ["calc/**/*.py"]
exclude: ["calc/legacy.py"]
find: ['\\bold_sum\\(']
replace: 'new_sum('
```
"""


def approve_flow() -> Trace:
    import httpx
    import redis

    from bot.plumbing.queue import queue
    from bot.server.context import ServerContext
    from bot.server.handlers import handlers
    from bot.server.worker import install_handlers
    from bot.settings import Settings
    from bot.web.app import create_app
    from jobs.adapters.sandbox import make_sandbox
    from tests.kit.burst_worker import BurstWorker
    from tests.kit.chaos.cluster import served
    from tests.kit.github import FakeGitHub
    from tests.kit.local_e2e import config_text, sample_files
    from tests.kit.redis_server import running_redis
    from tests.kit.webhooks import deliver, make_event

    secret, owner, name, maintainer = "flow-s3cret", "octo-org", "widgets", "maria"
    with tempfile.TemporaryDirectory(prefix="flow-trace-") as tmp, running_redis() as url, \
            FakeGitHub(root=Path(tmp) / "github", git_http=True) as gh:
        connection = redis.Redis.from_url(url)
        repo = gh.add_repo(owner, name, sample_files(config=config_text(batches_per_milestone=1)))
        gh.add_issue(repo, "Replace old_sum() with new_sum()", ISSUE_BODY, user=maintainer)
        gh.set_permission(repo, maintainer, "maintain")
        settings = Settings(app_id=gh.app_id, private_key=gh.private_key_pem,
                            webhook_secret=secret, redis_url=url, github_api_url=gh.base_url,
                            workdir=Path(tmp) / "work", app_slug="stepwise")
        ctx = ServerContext.from_settings(settings, connection=connection,
                                          sandbox=make_sandbox(require_isolation=True))
        install_handlers(handlers(ctx))

        def work() -> None:
            BurstWorker([queue(connection)], connection=connection).work(burst=True)

        with served(create_app(settings, connection)) as web, \
                httpx.Client(base_url=web, trust_env=False) as client:
            def send(event: str, **overrides: Any) -> None:
                payload = make_event(event, repo=f"{owner}/{name}", **overrides)
                if "comment" in payload:  # written now, after the gate was shown
                    payload["comment"]["created_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                     time.gmtime())
                deliver(client, event.split(".")[0], payload, secret=secret)

            send("issues.labeled", issue_number=1, sender=maintainer)
            work()
            job = ctx.store.find(f"{owner}/{name}", 1)
            if job is None or job.gate is None or job.gate.kind != "plan":
                raise RuntimeError(f"expected the plan gate, got {job and job.status}")
            time.sleep(1.1)  # GitHub's timestamps are to the second: the comment comes after
            posted = gh.add_comment(repo, 1, "/stepwise approve", user=maintainer)
            send("issue_comment.created", issue_number=1, comment_body="/stepwise approve",
                 comment_user=maintainer, sender=maintainer, comment_id=posted.id)
            with traced() as trace:
                work()
            job = ctx.store.find(f"{owner}/{name}", 1)
            if job is None or not job.batches or job.batches[0].commit is None:
                raise RuntimeError(f"batch 1 was not pushed: {job and job.status} {job and job.gate} "
                               f"{job and [e.message for e in job.events[-5:]]}")
        return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flow", choices=("approve", "local", "both"), default="both")
    parser.add_argument("--files", action="store_true", help="list the files each flow crossed")
    args = parser.parse_args()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    print(f"code at {ROOT}")
    if args.flow in ("approve", "both"):
        print(approve_flow().report("approve to push", list_files=args.files))
    if args.flow in ("local", "both"):
        print(local_flow().report("local run --yes", list_files=args.files))


if __name__ == "__main__":
    main()
