"""The fake GitHub's CI records: check suites and runs, commit statuses, branch protection's and
rulesets' required checks, GitHub Actions workflow runs and jobs (with their logs).

One `RepoCi` hangs off each FakeRepo (`repo.ci`). As on GitHub, an Actions job and the check run
it reports are the same object id (`WorkflowJob.id == CheckRun.id`), and each workflow run owns
one check suite of the `github-actions` app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

ACTIONS_SLUG = "github-actions"
ACTIONS_APP_ID = 15368  # GitHub Actions' app id on github.com
MAX_ANNOTATIONS_PER_REQUEST = 50


@dataclass
class AppRef:
    """The app a check suite belongs to (Stepwise's own, GitHub Actions, or another CI)."""

    id: int
    slug: str
    name: str


@dataclass
class CheckAnnotation:
    path: str
    start_line: int
    end_line: int
    annotation_level: str
    message: str
    title: str | None = None
    raw_details: str | None = None


@dataclass
class CheckSuite:
    id: int
    head_sha: str
    head_branch: str | None
    app: AppRef
    created_at: datetime
    updated_at: datetime
    status: str = "queued"
    conclusion: str | None = None
    rerequests: int = 0


@dataclass
class CheckRun:
    id: int
    suite_id: int
    name: str
    head_sha: str
    app: AppRef
    started_at: datetime
    status: str = "queued"
    conclusion: str | None = None
    external_id: str = ""
    details_url: str | None = None
    completed_at: datetime | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[CheckAnnotation] = field(default_factory=list)
    rerequests: int = 0


@dataclass
class CommitStatus:
    id: int
    sha: str
    context: str
    state: str  # error | failure | pending | success
    creator: str
    created_at: datetime
    target_url: str | None = None
    description: str | None = None


@dataclass
class WorkflowJob:
    id: int  # the id of the check run this job reports
    run_id: int
    name: str
    head_sha: str
    started_at: datetime
    status: str = "queued"
    conclusion: str | None = None
    completed_at: datetime | None = None
    run_attempt: int = 1
    log: str = ""


@dataclass
class WorkflowRun:
    id: int
    name: str
    head_sha: str
    head_branch: str
    suite_id: int
    created_at: datetime
    updated_at: datetime
    path: str = ".github/workflows/ci.yml"
    status: str = "queued"
    conclusion: str | None = None
    run_attempt: int = 1
    run_number: int = 1
    jobs: list[int] = field(default_factory=list)  # WorkflowJob ids, every attempt's
    rerun_requested: bool = False  # rerun-failed-jobs was asked for (the CI player runs it)


@dataclass
class RequiredChecks:
    """What a branch requires: `contexts` (check names or status contexts), `strict` (up to date)."""

    contexts: list[str] = field(default_factory=list)
    strict: bool = False
    app_ids: dict[str, int] = field(default_factory=dict)  # context -> the App it must come from


@dataclass
class Ruleset:
    id: int
    name: str
    branches: list[str]  # branch names the ruleset targets (`~DEFAULT_BRANCH` for the default)
    required: list[str]
    strict: bool = False
    enforcement: str = "active"
    required_signatures: bool = False  # the ruleset's `required_signatures` rule


@dataclass
class RepoCi:
    suites: dict[int, CheckSuite] = field(default_factory=dict)
    runs: dict[int, CheckRun] = field(default_factory=dict)
    statuses: list[CommitStatus] = field(default_factory=list)
    protection: dict[str, RequiredChecks] = field(default_factory=dict)  # branch -> required checks
    rulesets: list[Ruleset] = field(default_factory=list)
    signed_branches: set[str] = field(default_factory=set)  # protection requires signed commits
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    jobs: dict[int, WorkflowJob] = field(default_factory=dict)

    def runs_on(self, sha: str) -> list[CheckRun]:
        return [run for run in self.runs.values() if run.head_sha == sha]

    def suites_on(self, sha: str) -> list[CheckSuite]:
        return [suite for suite in self.suites.values() if suite.head_sha == sha]

    def statuses_on(self, sha: str) -> list[CommitStatus]:
        """Newest first, as GitHub lists them."""
        return sorted((s for s in self.statuses if s.sha == sha), key=lambda s: -s.id)
