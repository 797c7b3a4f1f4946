"""`stepwise check-config [--repo PATH]`: validate `.github/stepwise.yml` as a job would read it,
for a repository's own CI. Exit 0 when it is valid (the defaults included), 2 with every
problem, each with its field and fix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli.output import console, guarded
from jobs.basics.errors import BadInputError
from jobs.inputs.config import CONFIG_PATH, load_config


def check_config(repo: Annotated[Path, typer.Option(
        "--repo", help="The repository's root (default: the current directory).")] = Path(".")
                 ) -> None:
    """Check .github/stepwise.yml: exit 0 when valid, 2 listing every problem."""
    def action() -> None:
        if not repo.is_dir():
            raise BadInputError(f"--repo {repo} is not a directory",
                                hint="pass the repository's root directory")
        path = repo / CONFIG_PATH
        try:
            text = path.read_text(encoding="utf-8") if path.is_file() else None
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInputError(f"cannot read {CONFIG_PATH}: {exc}",
                                hint="make it a readable UTF-8 text file") from None
        load_config(text)  # every problem at once (exit 2 through `guarded`)
        what = "valid" if text is not None else "absent, so every default applies"
        console.print(f"{CONFIG_PATH} is {what}.")
    guarded(action)
