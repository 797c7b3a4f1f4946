"""Reading the base commit's version from git for the repository's version tools (the rules are
jobs/kernel/git_versions.py): the packaging files and `git describe`, both read by Stepwise
from the trusted repository, never by sandboxed code."""

from __future__ import annotations

from jobs.kernel.git_versions import PACKAGING_FILES, GitVersion, git_version
from jobs.ports import Workspace


def describe(repository: Workspace, sha: str) -> str:
    """`git describe --tags --long` of `sha` (`v1.2-3-gabc1234`), or "" without a tag."""
    out = repository.git("describe", "--tags", "--long", "--abbrev=7", sha, check=False)
    line = out.strip().splitlines()[0] if out.strip() else ""
    return line if line.rsplit("-", 2)[-1].startswith("g") else ""


def base_git_version(repository: Workspace, sha: str) -> GitVersion | None:
    """What the job's commands are told of the version at `sha`; None when the repository uses
    no git-version tool."""
    files = repository.read_texts(sha, PACKAGING_FILES)
    if not any(files.values()):
        return None
    return git_version(files, described=describe(repository, sha), sha=sha)
