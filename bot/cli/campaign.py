"""`stepwise campaign`: one spec over several local checkouts (jobs/local_campaigns.py), the
preview and plan gate first, then canaries and waves; `--command` steers it with the words of
`/stepwise campaign <verb>`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli.output import console, guarded, plain, print_markdown


def campaign(
    issue: Annotated[Path, typer.Option("--issue", help="Markdown file: `# title`, then a "
                                        "```stepwise block holding a `campaign:` block.")],
    repos: Annotated[list[Path] | None, typer.Argument(
        help="The checkouts to run over (needed to start; later runs remember them).")] = None,
    command: Annotated[str | None, typer.Option(
        "--command", help="Steer it: approve REPO|all, retry-failed, skip REPO REASON, "
        "pause, resume, cancel, add DIR.")] = None,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Approve the campaign's plan gate (`approve all` at the preview), as "
        "`run --yes` passes a job's.")] = False,
    state: Annotated[Path | None, typer.Option(
        "--state", help="Where the campaign's record lives "
        "(default: .stepwise-campaigns/<issue name>/ beside the issue file).")] = None,
) -> None:
    """Run one change across several repositories: preview, canaries, waves, dashboard.

    Exit codes: 0 every repository completed, 3 waiting (the preview's plan gate, or gates of
    repositories), 4 halted or a repository needs a human, 5 cancelled, 2 bad input.
    """
    def action() -> None:
        from jobs.local_campaigns import run_campaign  # only this command runs campaigns

        result = run_campaign(issue, repos or [], command=command, yes=yes,
                              state_dir=state)
        for line in result.said:
            console.print(plain(line), soft_wrap=True)
        print_markdown(result.dashboard)
        raise typer.Exit(result.exit_code)
    guarded(action)
