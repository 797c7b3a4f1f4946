"""The `stepwise` command line: local mode (run, the gate verbs, revert, status) and the demo."""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from bot.demo.demo import prepare_demo
from bot.observability.logs import setup_logging, uvicorn_log_config
from jobs.adapters.store import BusyError
from jobs.adapters.workspace import Repository
from jobs.domain.errors import BadInputError, StepwiseError
from jobs.domain.gates import Verb
from jobs.domain.model import BatchStatus, JobStatus
from jobs.editors.llm.settings import LlmSettings, load_llm_settings
from jobs.engine.engine import Outcome
from jobs.local import LocalSession, local_jobs, read_issue
from jobs.ports import Publication

app = typer.Typer(
    help="Stepwise: long maintenance jobs in small, validated, reversible steps.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)
console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)

RepoOption = Annotated[Path, typer.Option("--repo", help="Path of the git checkout.")]
NumberOption = Annotated[int, typer.Option("--number", help="Issue number (names branch and note).")]
LlmUrl = Annotated[str | None, typer.Option(
    "--llm-base-url", help="OpenAI-compatible endpoint for recipe llm (STEPWISE_LLM_BASE_URL), "
    "e.g. http://127.0.0.1:11434/v1; the key only from STEPWISE_LLM_API_KEY.")]
LlmModel = Annotated[str | None, typer.Option("--llm-model", help="Model (STEPWISE_LLM_MODEL).")]
LlmBudget = Annotated[int | None, typer.Option(
    "--llm-budget", help="Tokens a job may spend before the budget gate "
    "(STEPWISE_LLM_TOKEN_BUDGET, default 200000).")]
LlmTimeout = Annotated[float | None, typer.Option(
    "--llm-timeout", help="Seconds per model request (STEPWISE_LLM_TIMEOUT_S, default 120).")]
EXIT_BAD_INPUT = 2
EXIT_BUSY = 6  # another process is advancing the job (DESIGN's codes are 0-5)


def plain(text: str, style: str = "") -> Text:
    """Text printed exactly as written: nothing is read as rich markup, and a `code span`
    shows without its backticks (styled instead); fence lines of a code block are dropped."""
    out, fenced, first = Text(style=style), False, True
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not first:
            out.append("\n")
        first = False
        if fenced:  # command output: verbatim, backticks and all
            out.append(line)
            continue
        for index, part in enumerate(line.split("`")):
            out.append(part, style="bold" if index % 2 else "")
    return out


def verbatim(text: str) -> Markdown:
    """Markdown in which names print verbatim: `__init__.py` outside a code span is not bold."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            parts = line.split("`")
            line = "`".join(part if index % 2 else part.replace("_", "\\_")
                            for index, part in enumerate(parts))
        lines.append(line)
    return Markdown("\n".join(lines))


def show(kind: Publication, text: str) -> None:
    if kind is Publication.GATE:
        return  # the command ends at the gate and prints its prompt, with the exact commands
    if kind is Publication.NOTICE:
        console.print(Text("→ ", style="cyan") + plain(text))
        return
    if kind is Publication.PROGRESS:
        status_line = next((line for line in text.splitlines() if line.startswith("Status:")), "")
        console.print(Text("  ") + plain(status_line, style="dim"))
        return
    console.print(verbatim(text))
    console.print()


def finish(outcome: Outcome, message: str | None = None) -> None:
    if message:
        console.print(plain(message, style="bold"))
    waiting = outcome.exit_code in (3, 4)
    colour = "green" if outcome.exit_code == 0 else "yellow" if waiting else "red"
    console.print(plain(outcome.message, style=colour))
    raise typer.Exit(outcome.exit_code)


def guarded(action: Callable[[], None]) -> None:
    """Turn engine errors into a message naming the fix and the contract's exit code (errors
    print verbatim, backticks included, on stderr; a busy job exits EXIT_BUSY)."""
    setup_logging(level=logging.WARNING)  # every command logs through the redaction filter
    try:
        action()
    except BadInputError as exc:
        errors.print(Text("error: ", style="red") + Text(exc.message))
        if exc.hint:
            errors.print(Text("fix: ", style="dim") + Text(exc.hint))
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except BusyError as exc:
        errors.print(Text("busy: ", style="yellow") + Text(exc.message))
        errors.print(Text("hint: ", style="dim") + Text(exc.hint))
        raise typer.Exit(EXIT_BUSY) from None
    except StepwiseError as exc:
        errors.print(Text("error ", style="red") + Text(f"`{exc.code}` ({exc.retry_class}): "
                                                        f"{exc.message}"))
        if exc.hint:
            errors.print(Text("hint: ", style="dim") + Text(exc.hint))
        raise typer.Exit(1) from None


def llm_settings(base_url: str | None, model: str | None, budget: int | None,
                 timeout: float | None) -> LlmSettings | None:
    """The --llm-* options over STEPWISE_LLM_*; None when none was given (read when needed)."""
    if base_url is None and model is None and budget is None and timeout is None:
        return None
    return load_llm_settings(base_url=base_url, model=model, token_budget=budget,
                             timeout_s=timeout)


def session(repo: Path, number: int, llm: LlmSettings | None = None) -> LocalSession:
    return LocalSession(repo, number, sink=show, llm=llm)


@app.command()
def run(
    repo: RepoOption,
    issue: Annotated[Path, typer.Option("--issue", help="Markdown file: `# title`, then the "
                                        "body with a ```stepwise block.")],
    number: NumberOption = 0,
    yes: Annotated[bool, typer.Option("--yes", help="Pass plan and milestone gates.")] = False,
    llm_base_url: LlmUrl = None, llm_model: LlmModel = None, llm_budget: LlmBudget = None,
    llm_timeout: LlmTimeout = None,
) -> None:
    """Start a job from an issue file, or resume it where it stopped.

    An issue without a ```stepwise block, with a model configured: the model drafts the spec,
    which is printed, and the job waits at the plan gate.
    """
    def action() -> None:
        llm = llm_settings(llm_base_url, llm_model, llm_budget, llm_timeout)
        finish(session(repo, number, llm).run_file(issue, yes=yes))
    guarded(action)


def _verb(verb: Verb, repo: Path, number: int, reason: str = "",
          llm: tuple[str | None, str | None, int | None, float | None] = (None,) * 4) -> None:
    def action() -> None:
        message, outcome = session(repo, number, llm_settings(*llm)).verb(verb, reason=reason)
        finish(outcome, message)
    guarded(action)


@app.command()
def approve(repo: RepoOption, number: NumberOption = 0, llm_base_url: LlmUrl = None,
            llm_model: LlmModel = None, llm_budget: LlmBudget = None,
            llm_timeout: LlmTimeout = None) -> None:
    """Pass the open gate, then carry on until the next one."""
    _verb(Verb.APPROVE, repo, number, llm=(llm_base_url, llm_model, llm_budget, llm_timeout))


@app.command()
def retry(repo: RepoOption, number: NumberOption = 0, llm_base_url: LlmUrl = None,
          llm_model: LlmModel = None, llm_budget: LlmBudget = None,
          llm_timeout: LlmTimeout = None) -> None:
    """Retry the paused batch with its attempt counter reset."""
    _verb(Verb.RETRY, repo, number, llm=(llm_base_url, llm_model, llm_budget, llm_timeout))


@app.command()
def skip(reason: Annotated[str, typer.Argument(help="Why the batch is skipped.")],
         repo: RepoOption, number: NumberOption = 0, llm_base_url: LlmUrl = None,
         llm_model: LlmModel = None, llm_budget: LlmBudget = None,
         llm_timeout: LlmTimeout = None) -> None:
    """Mark the paused batch skipped with a reason and go on."""
    _verb(Verb.SKIP, repo, number, reason,
          llm=(llm_base_url, llm_model, llm_budget, llm_timeout))


@app.command()
def cancel(repo: RepoOption, number: NumberOption = 0) -> None:
    """Cancel the job (a running one stops at the next safe point)."""
    _verb(Verb.CANCEL, repo, number)


@app.command()
def revert(batch: Annotated[int, typer.Argument(help="Batch number to revert.")],
           repo: RepoOption, number: NumberOption = 0) -> None:
    """Add a revert commit for a batch and mark it reverted."""
    def action() -> None:
        message, outcome = session(repo, number).revert(batch)
        finish(outcome, message)
    guarded(action)


@app.command()
def instruct(text: Annotated[str, typer.Argument(help="The standing instruction.")],
             repo: RepoOption, number: NumberOption = 0) -> None:
    """Add a standing instruction for later llm batches."""
    def action() -> None:
        console.print(session(repo, number).instruct(text))
    guarded(action)


@app.command()
def status(repo: RepoOption, number: NumberOption = 0, server: Annotated[bool, typer.Option(
        "--server", help="Read the server's record in Redis (STEPWISE_REDIS_URL); --repo is "
        "owner/name. Implied when STEPWISE_REDIS_URL is set and --repo is not a directory.")
        ] = False) -> None:
    """Print the progress card; the exit code is the job's."""
    def action() -> None:
        from bot.taskcenter.terminal import server_mode, server_status

        if server_mode(server, repo):
            card, code = server_status(str(repo), number)
        else:
            card, outcome = session(repo, number).status()
            code = outcome.exit_code
            if outcome.status is JobStatus.INTERRUPTED:
                card += "\n\n" + outcome.message
        console.print(verbatim(card))
        raise typer.Exit(code)
    guarded(action)


@app.command()
def jobs(
    status: Annotated[str | None, typer.Option(
        "--status", help="running, waiting, needs_human, failed, completed, cancelled, or one "
        "job status (queued, planning, awaiting_human, cancel_requested, interrupted).")] = None,
    repo: Annotated[str | None, typer.Option(
        "--repo", help="A checkout's path: list its local jobs. Server: only this owner/name."
    )] = None,
    text: Annotated[str | None, typer.Option("--text", help="Words in the title, #issue, id.")
                    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 50,
) -> None:
    """List a checkout's local jobs (--repo PATH), or the server's jobs from Redis
    (STEPWISE_REDIS_URL), newest first."""
    def action() -> None:
        from bot.taskcenter.records import StatusFilter

        if repo is not None and (Path(repo).is_dir() or repo.startswith(("/", ".", "~"))):
            _local_jobs(Path(repo).expanduser())  # a path: the checkout's local jobs
            return
        from bot.taskcenter.terminal import jobs_table

        try:
            chosen = StatusFilter(status) if status else None
        except ValueError:
            raise BadInputError(f"unknown --status {status!r}", hint="use one of: " + ", ".join(
                s.value for s in StatusFilter)) from None
        table, total = jobs_table(status=chosen, repo=repo, text=text, limit=limit)
        console.print(table)
        console.print(f"{total} job{'' if total == 1 else 's'} match" +
                      (f"; the newest {limit} are shown" if total > limit else ""))
    guarded(action)


def _local_jobs(repo: Path) -> None:
    found = local_jobs(repo)
    table = Table("#", "title", "status", "gate", "batches", "branch")
    for job in found:
        done = sum(1 for b in job.batches if b.status is BatchStatus.COMPLETED)
        table.add_row(str(job.number), Text(job.title), str(job.status),
                      str(job.gate.kind) if job.gate else "—",
                      f"{done}/{len(job.batches)} completed", Text(job.branch))
    if found:
        console.print(table)
    console.print(f"{len(found)} local job{'' if len(found) == 1 else 's'} in {repo}"
                  + ("" if found else "; start one with `stepwise run --repo PATH --issue "
                     "FILE.md`"), markup=False)


@app.command()
def demo(
    directory: Annotated[Path | None, typer.Option("--dir", help="Where to create the sample "
                                                   "repository (default: a new temp dir).")] = None,
    llm_scripted: Annotated[bool, typer.Option(
        "--llm-scripted", help="Run an llm job against a scripted model on loopback, to watch "
        "the feedback loop (no model server needed).")] = False,
) -> None:
    """Run a whole job on the bundled sample repository (local mode, no GitHub or Redis)."""
    target = directory or Path(tempfile.mkdtemp(prefix="stepwise-demo-"))
    def action() -> None:
        repo, issue = prepare_demo(target)
        console.print(f"Sample repository: [bold]{repo}[/]")
        if llm_scripted:
            _llm_demo(repo, target)
            return
        outcome = LocalSession(repo, 1, sink=show).run(read_issue(issue), yes=True)
        _show_note(repo, outcome)
        finish(outcome)
    guarded(action)


def _show_note(repo: Path, outcome: Outcome, llm: LlmSettings | None = None) -> None:
    job = LocalSession(repo, 1, sink=show, llm=llm).load()
    if outcome.exit_code == 0:
        text = Repository(repo).git("show", f"{job.branch}:{job.note_path}")
        console.print(Markdown(text))
        console.print(f"Change note: [bold]{Path(job.note_path).name}[/] on branch "
                      f"[bold]{job.branch}[/]; see `git -C {repo} log --oneline {job.branch}`")
    transcripts = [a.transcript for b in job.batches for a in b.attempts if a.transcript]
    if transcripts:
        console.print("Model transcripts (every request, answer and piece of feedback):")
        for path in transcripts:
            console.print(f"  {repo / path}")


def _llm_demo(repo: Path, target: Path) -> None:
    from bot.demo.llm_demo import DemoModel, demo_settings, write_issue
    from bot.demo.scripted_llm import ScriptedServer

    with ScriptedServer(script=[DemoModel(repo)] * 40) as server:
        llm = demo_settings(server)
        console.print(f"Scripted model at [bold]{server.url}[/] (loopback)")
        outcome = LocalSession(repo, 1, sink=show, llm=llm).run(read_issue(write_issue(target)),
                                                                 yes=True)
        _show_note(repo, outcome, llm)
    finish(outcome)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (STEPWISE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (STEPWISE_PORT).")] = None,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Web processes (one core "
                                         "acknowledges a few hundred deliveries a second).")] = 1,
) -> None:
    """Run the web app (webhooks, health) with uvicorn."""
    def action() -> None:
        import uvicorn

        from bot.settings import load_settings
        from bot.web.app import create_app

        settings = load_settings()
        setup_logging(settings)
        target: Any = create_app(settings)
        if workers > 1:  # each process builds its own app from the same environment
            target = "bot.web.app:create_app"
        uvicorn.run(target, host=host or settings.host, port=port or settings.port,
                    workers=workers, factory=workers > 1, log_level="info",
                    log_config=uvicorn_log_config(json_lines=settings.log_format == "json"))
    guarded(action)


@app.command()
def worker(
    burst: Annotated[bool, typer.Option("--burst", help="Stop when the queue is empty.")] = False,
) -> None:
    """Run an RQ worker on the `stepwise` queue (scheduler included)."""
    def action() -> None:
        from bot.observability.jsonlog import with_log_context
        from bot.server.context import ServerContext
        from bot.server.handlers import handlers
        from bot.server.steps import reap, run_reaper
        from bot.server.worker import install_handlers, run_worker
        from bot.settings import load_settings

        settings = load_settings()
        setup_logging(settings)
        context = ServerContext.from_settings(settings)
        install_handlers(with_log_context(handlers(context)))  # job_id, repo, ... on each line
        context.warm_up()  # imports and clients every forked work horse would build again
        reap(context)  # recover jobs whose worker died, then keep looking in a thread
        stop = threading.Event()
        threading.Thread(target=run_reaper, args=(context, stop), daemon=True,
                         name="reaper").start()
        try:
            run_worker(context.redis, burst=burst)
        finally:
            stop.set()
    guarded(action)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            console.print(f"stepwise {version('stepwise-bot')}")
        except PackageNotFoundError:
            console.print("stepwise (version unknown: not installed as a package)")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", help="Print the version and exit.", callback=_version,
        is_eager=True)] = False) -> None:
    """Stepwise: long maintenance jobs in small, validated, reversible steps."""


def main() -> None:
    app()


if __name__ == "__main__":
    main()
