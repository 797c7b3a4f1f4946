"""The `stepwise` command line: local mode (run, the gate verbs, revert, status) and the demo."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown

from bot.demo import prepare_demo
from bot.logs import setup_logging, uvicorn_log_config
from jobs.engine import Outcome
from jobs.errors import BadInputError, StepwiseError
from jobs.forge import Publication
from jobs.gates import Verb
from jobs.local import LocalSession, read_issue
from jobs.workspace import run_git

app = typer.Typer(
    help="Stepwise: long maintenance jobs in small, validated, reversible steps.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
)
console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)

RepoOption = Annotated[Path, typer.Option("--repo", help="Path of the git checkout.")]
NumberOption = Annotated[int, typer.Option("--number", help="Issue number (names branch and note).")]
EXIT_BAD_INPUT = 2


def show(kind: Publication, text: str) -> None:
    if kind is Publication.GATE:
        return  # the command ends at the gate and prints its prompt, with the exact commands
    if kind is Publication.NOTICE:
        console.print(f"[cyan]→[/] {text}")
        return
    if kind is Publication.PROGRESS:
        status_line = next((line for line in text.splitlines() if line.startswith("Status:")), "")
        console.print(f"  [dim]{status_line}[/]")
        return
    console.print(Markdown(text))
    console.print()


def finish(outcome: Outcome, message: str | None = None) -> None:
    if message:
        console.print(f"[bold]{message}[/]")
    waiting = outcome.exit_code in (3, 4)
    colour = "green" if outcome.exit_code == 0 else "yellow" if waiting else "red"
    console.print(f"[{colour}]{outcome.message}[/]")
    raise typer.Exit(outcome.exit_code)


def guarded(action: Callable[[], None]) -> None:
    """Turn engine errors into a message naming the fix and the contract's exit code."""
    setup_logging(level=logging.WARNING)  # every command logs through the redaction filter
    try:
        action()
    except BadInputError as exc:
        errors.print(f"[red]error:[/] {exc.message}")
        if exc.hint:
            errors.print(f"[dim]fix:[/] {exc.hint}")
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except StepwiseError as exc:
        errors.print(f"[red]error[/] `{exc.code}` ({exc.retry_class}): {exc.message}")
        if exc.hint:
            errors.print(f"[dim]hint:[/] {exc.hint}")
        raise typer.Exit(1) from None


def session(repo: Path, number: int) -> LocalSession:
    return LocalSession(repo, number, sink=show)


@app.command()
def run(
    repo: RepoOption,
    issue: Annotated[Path, typer.Option("--issue", help="Markdown file: `# title`, then the "
                                        "body with a ```stepwise block.")],
    number: NumberOption = 0,
    yes: Annotated[bool, typer.Option("--yes", help="Pass plan and milestone gates.")] = False,
) -> None:
    """Start a job from an issue file, or resume it where it stopped."""
    def action() -> None:
        task = read_issue(issue)
        finish(session(repo, number).run(task, yes=yes))
    guarded(action)


def _verb(verb: Verb, repo: Path, number: int, reason: str = "") -> None:
    def action() -> None:
        message, outcome = session(repo, number).verb(verb, reason=reason)
        finish(outcome, message)
    guarded(action)


@app.command()
def approve(repo: RepoOption, number: NumberOption = 0) -> None:
    """Pass the open gate, then carry on until the next one."""
    _verb(Verb.APPROVE, repo, number)


@app.command()
def retry(repo: RepoOption, number: NumberOption = 0) -> None:
    """Retry the paused batch with its attempt counter reset."""
    _verb(Verb.RETRY, repo, number)


@app.command()
def skip(reason: Annotated[str, typer.Argument(help="Why the batch is skipped.")],
         repo: RepoOption, number: NumberOption = 0) -> None:
    """Mark the paused batch skipped with a reason and go on."""
    _verb(Verb.SKIP, repo, number, reason)


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
def status(repo: RepoOption, number: NumberOption = 0) -> None:
    """Print the progress card; the exit code is the job's."""
    def action() -> None:
        card, outcome = session(repo, number).status()
        console.print(Markdown(card))
        raise typer.Exit(outcome.exit_code)
    guarded(action)


@app.command()
def demo(
    directory: Annotated[Path | None, typer.Option("--dir", help="Where to create the sample "
                                                   "repository (default: a new temp dir).")] = None,
) -> None:
    """Run a whole job on the bundled sample repository (local mode, no GitHub or Redis)."""
    target = directory or Path(tempfile.mkdtemp(prefix="stepwise-demo-"))
    def action() -> None:
        repo, issue = prepare_demo(target)
        console.print(f"Sample repository: [bold]{repo}[/]")
        outcome = LocalSession(repo, 1, sink=show).run(read_issue(issue), yes=True)
        job = LocalSession(repo, 1, sink=show).load()
        note = repo / job.note_path
        if outcome.exit_code == 0:
            text = run_git(["show", f"{job.branch}:{job.note_path}"], cwd=repo)
            console.print(Markdown(text))
            console.print(f"Change note: [bold]{note.name}[/] on branch [bold]{job.branch}[/]; "
                          f"see `git -C {repo} log --oneline {job.branch}`")
        finish(outcome)
    guarded(action)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (STEPWISE_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (STEPWISE_PORT).")] = None,
) -> None:
    """Run the web app (webhooks, health) with uvicorn."""
    def action() -> None:
        import uvicorn

        from bot.app import create_app
        from bot.settings import load_settings

        settings = load_settings()
        setup_logging(settings)
        uvicorn.run(create_app(settings), host=host or settings.host, port=port or settings.port,
                    log_level="info", log_config=uvicorn_log_config())
    guarded(action)


@app.command()
def worker(
    burst: Annotated[bool, typer.Option("--burst", help="Stop when the queue is empty.")] = False,
) -> None:
    """Run an RQ worker on the `stepwise` queue (scheduler included)."""
    def action() -> None:
        from bot.context import ServerContext
        from bot.handlers import handlers
        from bot.settings import load_settings
        from bot.steps import reap_task
        from jobs.worker import install_handlers, run_worker

        settings = load_settings()
        setup_logging(settings)
        context = ServerContext.from_settings(settings)
        install_handlers(handlers(context))
        reap_task(context, {})  # recover jobs whose worker died, and start the periodic round
        run_worker(context.redis, burst=burst)
    guarded(action)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
