"""`stepwise demo`: a whole job on the bundled sample repository, or (`--llm-scripted`) an llm
job against a scripted model on loopback; the only command that imports bot/demo/."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from bot.cli.output import console, finish, guarded, plain, print_markdown, show
from bot.demo.demo import prepare_demo
from jobs.adapters.workspace import Repository
from jobs.basics.voice import shell_words
from jobs.engine.engine import Outcome
from jobs.local import LocalSession, read_issue
from jobs.recipes.llm_settings import LlmSettings


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
        print_markdown(text)  # as every command's output: no command wrapped at the edge
        look = shell_words("git", "-C", str(repo), "log", "--oneline", job.branch)
        console.print(plain(f"Change note: `{Path(job.note_path).name}` on branch "
                            f"`{job.branch}`; see `{look}`"), soft_wrap=True)
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
