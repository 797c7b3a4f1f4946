"""The bundled sample repository and issue that `stepwise demo` runs a whole job on."""

from __future__ import annotations

import shutil
from pathlib import Path

from jobs.adapters.workspace import BOT_EMAIL, BOT_NAME, run_git
from jobs.basics.errors import BadInputError

SAMPLE = Path(__file__).parent / "sample"


def copy_sample(destination: Path) -> None:
    """Copy the sample tree; `github/` is stored without its dot so packaging keeps it."""
    shutil.copytree(SAMPLE / "repo", destination, ignore=shutil.ignore_patterns("__pycache__"))
    (destination / "github").rename(destination / ".github")


def prepare_demo(target: Path) -> tuple[Path, Path]:
    """A fresh git repository holding the sample at `target/shelf`, and the issue file beside it."""
    repo = target / "shelf"
    if repo.exists():
        raise BadInputError(f"{repo} already exists", hint="pass --dir with an empty directory")
    target.mkdir(parents=True, exist_ok=True)
    copy_sample(repo)
    run_git(["init", "--quiet", "--initial-branch=main"], cwd=repo)
    git_dir = repo / ".git"
    run_git(["add", "-A"], cwd=repo, git_dir=git_dir, work_tree=repo)
    run_git(["-c", f"user.name={BOT_NAME}", "-c", f"user.email={BOT_EMAIL}",
             "commit", "--quiet", "-m", "shelf: initial import"], cwd=repo, git_dir=git_dir,
            work_tree=repo)
    issue = target / "issue-1.md"
    shutil.copyfile(SAMPLE / "ISSUE.md", issue)
    return repo, issue
