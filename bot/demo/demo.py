"""The bundled sample repository and issue that `stepwise demo` runs a whole job on."""

from __future__ import annotations

import shutil
from pathlib import Path

from jobs.adapters.git_identity import commit_identity
from jobs.adapters.workspace import run_git
from jobs.basics.errors import BadInputError

SAMPLE = Path(__file__).parent / "sample"
DEMO_NAME, DEMO_EMAIL = "Stepwise demo", "demo@stepwise.invalid"


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
    if commit_identity(cwd=repo, git_dir=git_dir) is None:
        # The demo's commits are yours, as a real job's are; with no git identity on this
        # machine, the sample repository gets one of its own (a real checkout is refused).
        for key, value in (("user.name", DEMO_NAME), ("user.email", DEMO_EMAIL)):
            run_git(["config", key, value], cwd=repo, git_dir=git_dir)
    run_git(["-c", f"user.name={DEMO_NAME}", "-c", f"user.email={DEMO_EMAIL}",
             "commit", "--quiet", "-m", "shelf: initial import"], cwd=repo, git_dir=git_dir,
            work_tree=repo)
    issue = target / "issue-1.md"
    shutil.copyfile(SAMPLE / "ISSUE.md", issue)
    return repo, issue
