"""The campaign's own record: its status and one small entry per repository, so a repository
event changes one entry (O(1)), whatever the number of repositories."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class CampaignStatus(StrEnum):
    PLAN = "plan"            # the preview is posted; waiting at the campaign's plan gate
    RUNNING = "running"      # repositories start wave by wave
    PAUSED = "paused"        # `pause`: no repository starts until `resume`
    HALTED = "halted"        # too many repositories need a human; `resume` after a fix
    COMPLETED = "completed"  # every repository ended
    CANCELLED = "cancelled"


class RepoState(StrEnum):
    LEFT_OUT = "left_out"        # not in the campaign (the reason says why)
    PREVIEWED = "previewed"      # in the preview, not approved yet
    APPROVED = "approved"        # approved, waiting for its wave
    WORKING = "working"          # its job is running
    WAITING = "waiting"          # its job waits at a decision gate (plan, milestone, ...)
    NEEDS_HUMAN = "needs_human"  # its job needs a human (failure, ci_failed, ...)
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"          # `campaign skip <repo> <reason>`


# States of a repository whose job was started and has not ended.
OPEN_STATES = frozenset({RepoState.WORKING, RepoState.WAITING, RepoState.NEEDS_HUMAN})
# States that count against the halt threshold.
TROUBLED_STATES = frozenset({RepoState.NEEDS_HUMAN, RepoState.FAILED})
# States a wave may move on from: the repository is not still working.
SETTLED_STATES = frozenset(set(RepoState) - {RepoState.WORKING, RepoState.APPROVED})
ENDED_STATES = frozenset({RepoState.COMPLETED, RepoState.FAILED, RepoState.CANCELLED,
                          RepoState.SKIPPED, RepoState.LEFT_OUT})


class RepoEntry(BaseModel):
    """One repository of the campaign."""

    model_config = ConfigDict(extra="forbid")

    name: str
    state: RepoState
    reason: str = ""               # why it is left out or skipped, or what its gate is about
    files: int = 0                 # files in scope at the preview
    targets: int = 0               # `find` matches at the preview
    preview_digest: str = ""       # what was approved: a later plan that differs stops
    wave: int | None = None        # 0: the canaries; None: not started
    job: str = ""                  # the job's handle in its mode (local: its issue number)
    link: str = ""                 # its pull request (server) or branch (local)
    batches_done: int = 0
    batches_total: int = 0
    files_done: int = 0
    gate: str = ""                 # the open gate of its job, if any
    answer: str = ""               # the command that answers that gate
    ci: str = ""                   # its CI state, where the mode has CI
    acknowledged: bool = False     # needs a human, and `resume` was said since: not counted again
    replanning: bool = False       # re-planned after a spec change `resume` approved: its next
                                   # plan gate passes whatever files it holds


class Campaign(BaseModel):
    """A campaign: its spec digest, settings and repositories in the order they roll out."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    spec_digest: str
    status: CampaignStatus = CampaignStatus.PLAN
    status_reason: str = ""
    created_at: datetime
    updated_at: datetime
    repos: dict[str, RepoEntry] = Field(default_factory=dict)  # insertion order = rollout order
    waves_started: int = 0
    replan: list[str] = Field(default_factory=list)  # open jobs the next `resume` re-plans
    history: list[str] = Field(default_factory=list, max_length=200)

    def entries(self, *states: RepoState) -> list[RepoEntry]:
        return [entry for entry in self.repos.values() if not states or entry.state in states]

    def log(self, at: datetime, message: str) -> None:
        """Keep the newest 200 lines of what happened."""
        self.history = [*self.history[-199:], f"{at:%Y-%m-%d %H:%M} {message}"]
        self.updated_at = at
