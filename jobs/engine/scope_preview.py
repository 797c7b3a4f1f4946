"""What a job would plan at a commit, found without starting it: the files in scope (with
`find`, only those that match) and the targets, or the bad input that refuses the plan.
Campaigns preview every repository with it before any edit."""

from __future__ import annotations

from dataclasses import dataclass

from jobs.basics.errors import SpecError
from jobs.engine.discovery import plan_scope, targets_at
from jobs.engine.start import check_runnable
from jobs.inputs.config import RepoConfig
from jobs.inputs.spec import IssueTask
from jobs.ports import Workspace


@dataclass(frozen=True)
class ScopePreview:
    files: tuple[str, ...]
    targets: int


def preview_scope(repo: Workspace, sha: str, issue: IssueTask,
                  config: RepoConfig) -> ScopePreview:
    """Raises BadInputError (SpecError) naming why nothing would be planned."""
    check_runnable(issue, config)
    scope, _left_out = plan_scope(repo, sha, issue.spec, config)
    if not issue.spec.find:
        return ScopePreview(tuple(scope), 0)
    found = targets_at(repo, sha, scope, issue.spec.find)
    matching = tuple(path for path in scope if found.get(path))
    if not matching:
        raise SpecError("no `find` match: nothing to change", hint="nothing to do here")
    return ScopePreview(matching, sum(len(lines) for lines in found.values()))
