"""The `stepwise` command line: the app, local mode's commands (run, the gate verbs, revert,
instruct, status, jobs) and the registration of the others: `demo` (demo.py), `serve`
and `worker` (server.py), `campaign` (campaign.py), `check-config` (config.py); what the
commands print is output.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from bot.cli.campaign import campaign
from bot.cli.config import check_config
from bot.cli.demo import demo
from bot.cli.output import console, finish, guarded, plain, print_markdown, show
from bot.cli.server import serve, worker
from jobs.basics.errors import BadInputError
from jobs.basics.voice import shell_words
from jobs.composition import install, report
from jobs.kernel.gates import Verb, split_skip_words
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.local import LocalSession, local_jobs
from jobs.local_interrupt import EXIT_INTERRUPTED_BY_USER, interruption_message
from jobs.local_numbers import number_for_command, number_for_run
from jobs.local_reload import approve_with_reloaded_config
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings

app = typer.Typer(
    help="Stepwise: long maintenance jobs in small, validated, reversible steps.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)

RepoOption = Annotated[Path, typer.Option("--repo", help="Path of the git checkout.")]
NumberOption = Annotated[int | None, typer.Option(
    "--number", help="Issue number (names branch and note). Default: `run` takes the job "
    "started from the same issue file, else the next free number; the other commands the only "
    "job that has not ended.")]
LlmUrl = Annotated[str | None, typer.Option(
    "--llm-base-url", help="OpenAI-compatible endpoint for recipe llm (STEPWISE_LLM_BASE_URL), "
    "e.g. http://127.0.0.1:11434/v1; the key only from STEPWISE_LLM_API_KEY.")]
LlmModel = Annotated[str | None, typer.Option("--llm-model", help="Model (STEPWISE_LLM_MODEL).")]
LlmBudget = Annotated[int | None, typer.Option(
    "--llm-budget", help="Tokens a job may spend before the budget gate "
    "(STEPWISE_LLM_TOKEN_BUDGET, default 200000).")]
LlmTimeout = Annotated[float | None, typer.Option(
    "--llm-timeout", help="Seconds per model request (STEPWISE_LLM_TIMEOUT_S, default 120).")]


def llm_settings(base_url: str | None, model: str | None, budget: int | None,
                 timeout: float | None) -> LlmSettings | None:
    """The --llm-* options over STEPWISE_LLM_*; None when none was given (read when needed)."""
    if base_url is None and model is None and budget is None and timeout is None:
        return None
    return load_llm_settings(base_url=base_url, model=model, token_budget=budget,
                             timeout_s=timeout)


@contextmanager
def resumable_on_interrupt(running: LocalSession) -> Iterator[None]:
    """Ctrl-C: say where the job stands and how to resume it, and exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        console.print(plain(interruption_message(running)), soft_wrap=True)
        raise typer.Exit(EXIT_INTERRUPTED_BY_USER) from None


def session(repo: Path, number: int | None, llm: LlmSettings | None = None, *,
            command: str = "status") -> LocalSession:
    """The session of job `number`, or (None) of the only job that has not ended."""
    chosen = number_for_command(repo, command) if number is None else number
    return LocalSession(repo, chosen, sink=show, llm=llm)


@app.command()
def run(
    repo: RepoOption,
    issue: Annotated[Path, typer.Option("--issue", help="Markdown file: `# title`, then the "
                                        "body with a ```stepwise block.")],
    number: NumberOption = None,
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
        chosen = number_for_run(repo, issue) if number is None else number
        running = session(repo, chosen, llm)
        with resumable_on_interrupt(running):
            outcome = running.run_file(issue, yes=yes)
        finish(outcome)
    guarded(action)


def _verb(verb: Verb, repo: Path, number: int | None, reason: str = "",
          llm: tuple[str | None, str | None, int | None, float | None] = (None,) * 4) -> None:
    def action() -> None:
        chosen = session(repo, number, llm_settings(*llm), command=str(verb))
        with resumable_on_interrupt(chosen):
            message, outcome = chosen.verb(verb, reason=reason)
        finish(outcome, message)
    guarded(action)


@app.command()
def approve(repo: RepoOption, number: NumberOption = None, llm_base_url: LlmUrl = None,
            llm_model: LlmModel = None, llm_budget: LlmBudget = None,
            llm_timeout: LlmTimeout = None,
            reload_config: Annotated[bool, typer.Option(
                "--reload-config", help="At the plan gate: read .github/stepwise.yml again (the "
                "working tree's when it differs from the job's commit), plan again with it, "
                "baseline included, and approve the new plan if its baseline passes.")] = False,
            ) -> None:
    """Pass the open gate, then carry on until the next one."""
    llm = (llm_base_url, llm_model, llm_budget, llm_timeout)
    if not reload_config:
        _verb(Verb.APPROVE, repo, number, llm=llm)
        return

    def action() -> None:
        chosen = session(repo, number, llm_settings(*llm), command="approve")
        with resumable_on_interrupt(chosen):
            message, outcome = approve_with_reloaded_config(chosen)
        finish(outcome, message)
    guarded(action)


@app.command()
def retry(repo: RepoOption, number: NumberOption = None, llm_base_url: LlmUrl = None,
          llm_model: LlmModel = None, llm_budget: LlmBudget = None,
          llm_timeout: LlmTimeout = None) -> None:
    """Retry the paused batch with its attempt counter reset."""
    _verb(Verb.RETRY, repo, number, llm=(llm_base_url, llm_model, llm_budget, llm_timeout))


@app.command()
def skip(words: Annotated[list[str], typer.Argument(
             help="Why the batch is skipped (with --files: the files first, then the reason).")],
         repo: RepoOption, number: NumberOption = None,
         files: Annotated[bool, typer.Option(
             "--files", help="Skip only the named files of the paused batch (set aside as a "
             "skipped batch of their own); the rest of the batch runs again.")] = False,
         llm_base_url: LlmUrl = None, llm_model: LlmModel = None, llm_budget: LlmBudget = None,
         llm_timeout: LlmTimeout = None) -> None:
    """Mark the paused batch skipped with a reason and go on (it names the files it leaves)."""
    llm = (llm_base_url, llm_model, llm_budget, llm_timeout)
    if not files:
        _verb(Verb.SKIP, repo, number, " ".join(words), llm=llm)
        return

    def action() -> None:
        chosen = session(repo, number, llm_settings(*llm), command="skip")
        paths, reason = split_skip_words(chosen.load(), words)
        with resumable_on_interrupt(chosen):
            message, outcome = chosen.verb(Verb.SKIP, reason=reason, files=paths)
        finish(outcome, message)
    guarded(action)


@app.command()
def cancel(repo: RepoOption, number: NumberOption = None) -> None:
    """Cancel the job (a running one stops at the next safe point)."""
    _verb(Verb.CANCEL, repo, number)


@app.command()
def revert(batch: Annotated[int, typer.Argument(help="Batch number to revert.")],
           repo: RepoOption, number: NumberOption = None) -> None:
    """Add a revert commit for a batch and mark it reverted."""
    def action() -> None:
        message, outcome = session(repo, number, command="revert").revert(batch)
        finish(outcome, message)
    guarded(action)


@app.command()
def instruct(text: Annotated[str, typer.Argument(help="The standing instruction.")],
             repo: RepoOption, number: NumberOption = None) -> None:
    """Add a standing instruction for later llm batches."""
    def action() -> None:
        console.print(plain(session(repo, number, command="instruct").instruct(text)),
                      soft_wrap=True)
    guarded(action)


@app.command()
def status(repo: RepoOption, number: NumberOption = None, server: Annotated[bool, typer.Option(
        "--server", help="Read the server's record in Redis (STEPWISE_REDIS_URL); --repo is "
        "owner/name. Implied when STEPWISE_REDIS_URL is set and --repo is not a directory.")
        ] = False) -> None:
    """Print the progress card; the exit code is the job's."""
    def action() -> None:
        from bot.taskcenter.terminal import server_mode, server_status

        if server_mode(server, repo):
            if number is None:
                raise BadInputError("`stepwise status --server` needs --number",
                                    hint="pass the issue number, e.g. --number 42")
            card, code = server_status(str(repo), number)
        else:
            card, outcome = session(repo, number).status()
            code = outcome.exit_code
            if outcome.status is JobStatus.INTERRUPTED:
                card += "\n\n" + outcome.message
        print_markdown(card)
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
    from rich.table import Table  # only this listing prints a table (saves every command ~15 ms)

    found = local_jobs(repo)
    table = Table("#", "title", "status", "gate", "batches", "branch")
    for job in found:
        done = sum(1 for b in job.batches if b.status is BatchStatus.COMPLETED)
        table.add_row(str(job.number), Text(job.title), str(job.status),
                      str(job.gate.kind) if job.gate else "—",
                      f"{done}/{len(job.batches)} completed", Text(job.branch))
    if found:
        console.print(table)
    start = shell_words("stepwise", "run", "--repo", str(repo), "--issue", "FILE.md")
    said = f"{len(found)} local job{'' if len(found) == 1 else 's'} in {repo}"
    console.print(plain(said + ("" if found else f"; start one with `{start}`")), soft_wrap=True)


@app.command("llm-report")
def llm_report(repo: RepoOption, number: NumberOption = None) -> None:
    """A job's model work as statistics: rounds and tokens per committed file, tool calls and
    their failures by tool and by error kind, and each edit's reason."""
    def action() -> None:
        chosen = session(repo, number, command="llm-report")
        job = chosen.store.load(chosen.number)
        if job is None:
            raise BadInputError(f"no job #{chosen.number} in {repo}",
                                hint="list the jobs with `stepwise jobs --repo PATH`")
        print_markdown(report("llm", job))
    guarded(action)


app.command()(demo)
app.command("check-config")(check_config)
app.command()(campaign)
app.command()(serve)
app.command()(worker)


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
    install()  # the CLI's composition root: every command may read a spec or a record


def main() -> None:
    app()


if __name__ == "__main__":
    main()
