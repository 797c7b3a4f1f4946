"""`make bench-llm`: every task per edit format against STEPWISE_LLM_BASE_URL (with
STEPWISE_LLM_MODEL, STEPWISE_LLM_API_KEY), or against the scripted model when no endpoint is
set; prints success rate, rounds, tool calls, tokens and wall time per format.

    python -m bench.llm_tasks [--formats tools,search_replace,whole,diff] [--tasks a,b]
                              [--scripted] [--verbose]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench._common import machine_facts
from bench.llm_tasks.scripted import ScriptedModel
from bench.llm_tasks.tasks import TASKS, Task
from bot.demo.scripted_llm import ScriptedServer
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import JobStatus
from jobs.local import LocalSession
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings
from tests.kit.local_e2e import config_text, issue_markdown
from tests.kit.repos import git, make_repo

FORMATS = ("tools", "search_replace", "whole", "diff")


@dataclass(frozen=True)
class Row:
    task: str
    edit_format: str
    success: bool
    rounds: int
    tool_calls: int
    tokens: int
    seconds: float
    why: str


def run_task(task: Task, edit_format: str, root: Path, endpoint: LlmSettings | None) -> Row:
    files = {**task.files, ".github/stepwise.yml": config_text(
        validate=[task.validate], allow_commands=["python", "node"], batch_size=20,
        max_failed_attempts=1)}
    repo = make_repo(root / f"{task.name}-{edit_format}", files)
    issue = parse_issue_file(issue_markdown(
        title=f"bench: {task.name}", recipe="llm", replace=None, exclude=None,
        find=list(task.find) or None, not_doing=None, instructions=task.instructions,
        paths=list(task.batch)))
    server = None
    if endpoint is None:
        server = ScriptedServer(script=[ScriptedModel(task)] * 60).start()
        settings = LlmSettings(base_url=server.url, model="scripted-bench", max_retries=0,
                               edit_format=edit_format)  # type: ignore[arg-type]
    else:
        settings = endpoint.model_copy(update={"edit_format": edit_format})
    session = LocalSession(repo, 1, sink=lambda _kind, _text: None, llm=settings)
    started = time.monotonic()
    try:
        session.run(issue, yes=True)
    finally:
        if server is not None:
            server.stop()
    seconds = time.monotonic() - started
    job = session.store.load(1)
    assert job is not None
    calls = [c for b in job.batches for a in b.attempts for c in a.llm_calls]
    final = {path: git(repo, "show", f"{job.branch}:{path}") + "\n" for path in task.batch}
    done = task.done(final)
    success = job.status is JobStatus.COMPLETED and done
    errors = [a.error.code for b in job.batches for a in b.attempts if a.error]
    why = "" if success else (f"job {job.status}" + (f" ({', '.join(errors)})" if errors else "")
                              + ("" if done else "; done-criterion not met"))
    return Row(task.name, edit_format, success, len(calls), sum(len(c.tools) for c in calls),
               sum(c.tokens_in + c.tokens_out for c in calls), seconds, why)


def table(rows: list[Row], formats: tuple[str, ...]) -> str:
    lines = ["| format | success | rounds/task | tool calls/task | tokens/task | seconds/task |",
             "|---|---|---|---|---|---|"]
    for edit_format in formats:
        mine = [r for r in rows if r.edit_format == edit_format]
        if not mine:
            continue
        n = len(mine)
        won = sum(r.success for r in mine)
        lines.append(f"| {edit_format} | {won}/{n} ({won / n:.0%}) | "
                     f"{sum(r.rounds for r in mine) / n:.1f} | "
                     f"{sum(r.tool_calls for r in mine) / n:.1f} | "
                     f"{sum(r.tokens for r in mine) / n:,.0f} | "
                     f"{sum(r.seconds for r in mine) / n:.1f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.llm_tasks")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--tasks", default="", help="task names, comma-separated (default all)")
    parser.add_argument("--scripted", action="store_true", help="ignore STEPWISE_LLM_BASE_URL")
    parser.add_argument("--verbose", action="store_true", help="one line per task run")
    args = parser.parse_args(argv)
    formats = tuple(f for f in args.formats.split(",") if f)
    unknown = [f for f in formats if f not in FORMATS]
    names = [n for n in args.tasks.split(",") if n]
    tasks = [t for t in TASKS if not names or t.name in names]
    if unknown or len(tasks) != (len(names) or len(TASKS)):
        print(f"unknown format or task; formats: {', '.join(FORMATS)}; tasks: "
              f"{', '.join(t.name for t in TASKS)}", file=sys.stderr)
        return 2
    endpoint = None
    if os.environ.get("STEPWISE_LLM_BASE_URL") and not args.scripted:
        endpoint = load_llm_settings().require()
    model = f"{endpoint.model} at {endpoint.base_url}" if endpoint else \
        "the scripted model (protocol only: set STEPWISE_LLM_BASE_URL to measure a model)"
    print(f"# bench-llm: {len(tasks)} task(s) x {len(formats)} format(s), {model}")
    print(f"machine: {machine_facts()}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="stepwise-bench-llm-") as tmp:
        for edit_format in formats:
            for task in tasks:
                row = run_task(task, edit_format, Path(tmp), endpoint)
                rows.append(row)
                if args.verbose or not row.success:
                    print(f"{edit_format:>14} {task.name:<36} "
                          f"{'ok' if row.success else 'FAILED'} rounds={row.rounds} "
                          f"tools={row.tool_calls} tokens={row.tokens} {row.seconds:.1f}s"
                          + (f" — {row.why}" if row.why else ""), flush=True)
    print(table(rows, formats))
    return 0 if endpoint is not None or all(r.success for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
