"""The campaign's own record: its status, one small entry per repository, and running counters
(per state, started, needing a human, files planned and done) kept up to date as entries
change, so a repository event changes one entry and a few counters (O(1)) and the halt and
completion rules read counters instead of scanning every entry.

Entries belong to their campaign: a change to an entry's field (`entry.state = ...`) updates
the counters, the per-state index and the set of entries to write back (`changed_names`), so no
caller can forget to. `campaign.repos[name] = entry` adds or replaces one the same way."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from jobs.decisions.edit_shapes import ShapeSummary


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
    NO_ACCESS = "no_access"      # its wave came, but who steers may not start a job there:
                                 # waiting for someone with access to approve it
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
    paths: list[str] = Field(default_factory=list)     # the first files in scope, by name
    checks: list[str] = Field(default_factory=list)    # its validation commands
    sample: str = ""               # a dry-run diff of one file in scope (`replace`)
    baseline: str = ""             # its job's validation on the base: passes, fails ('': not run)
    shapes: ShapeSummary | None = None  # its edit shapes (campaigns/shapes.py): the preview's
                                        # dry run, then its job's committed batches
    wave: int | None = None        # 0: the canaries; None: not started
    job: str = ""                  # the job's handle in its mode (local: its issue number)
    link: str = ""                 # its pull request (server) or branch (local)
    batches_done: int = 0
    batches_total: int = 0
    files_done: int = 0
    gate: str = ""                 # the open gate of its job, if any
    answer: str = ""               # (records before `answers`) the command that answers it
    answers: list[str] = Field(default_factory=list)  # the commands that answer its gate
    pull: str = ""                 # its pull request's address, once it has one
    where: str = ""                # where `answers` are said: `owner/repo#N` (server)
    ci: str = ""                   # its CI state, where the mode has CI
    acknowledged: bool = False     # needs a human, and `resume` was said since: not counted again
    replanning: bool = False       # re-planned after a spec change `resume` approved: its next
                                   # plan gate passes whatever files it holds
    plan_passed: bool = False      # the campaign passed its job's plan gate: a plan gate that
                                   # opens again (e.g. the baseline fails) waits for a human
    order: int = -1                # its place in the rollout (-1: not placed yet)

    _owner: Campaign | None = PrivateAttr(default=None)
    _key: str = PrivateAttr(default="")

    def __setattr__(self, name: str, value: Any) -> None:
        owner = None if name.startswith("_") else self._owner
        if owner is None:
            super().__setattr__(name, value)
            return
        owner._leave(self._key, self)
        super().__setattr__(name, value)
        owner._join(self._key, self)


# The running counters: one per state, then those the rules and the dashboard read.
COUNTERS: tuple[str, ...] = (*(f"state:{state}" for state in RepoState), "started", "troubled",
                             "files_planned", "files_done")


def contribution(entry: RepoEntry) -> dict[str, int]:
    """What one entry adds to the counters (`troubled`: started, needing a human or failed,
    and not acknowledged by a `resume`; what the halt rule counts)."""
    started = entry.wave is not None and entry.state is not RepoState.SKIPPED
    return {f"state:{entry.state}": 1, "started": int(started),
            "troubled": int(started and entry.state in TROUBLED_STATES
                            and not entry.acknowledged),
            "files_planned": entry.files if entry.state not in (RepoState.LEFT_OUT,
                                                                RepoState.SKIPPED) else 0,
            # The same entries as files_planned, and never more than planned: one tally feeds
            # every figure ("12 of 11 files done" counted a skipped repository's work).
            "files_done": min(entry.files_done, entry.files) if entry.state not in (
                RepoState.LEFT_OUT, RepoState.SKIPPED) else 0}


def recount(entries: list[RepoEntry]) -> dict[str, int]:
    """The counters from scratch: what the running counters must always equal."""
    tally = dict.fromkeys(COUNTERS, 0)
    for entry in entries:
        for counter, value in contribution(entry).items():
            tally[counter] += value
    return tally


class RepoTable(dict[str, RepoEntry]):
    """The campaign's entries by name, in rollout order; adding or replacing one keeps the
    counters right (other dict mutators are refused rather than silently bypassing them)."""

    def __init__(self, owner: Campaign) -> None:
        super().__init__()
        self.owner = owner

    def attach(self, key: str, entry: RepoEntry, *, counted: bool = True) -> None:
        if self.get(key) is entry:
            return
        if key in self:  # a replaced entry keeps its place in the rollout
            previous = self[key]
            self.owner._leave(key, previous)
            previous._owner = None
            entry.order = previous.order
        elif entry.order < 0:
            entry.order = self.owner.next_order
        self.owner.next_order = max(self.owner.next_order, entry.order + 1)
        super().__setitem__(key, entry)
        entry._owner, entry._key = self.owner, key
        self.owner._join(key, entry, counted=counted)

    def __setitem__(self, key: str, entry: RepoEntry) -> None:
        self.attach(key, entry)

    def _refused(self, *_: object, **__: object) -> Any:
        raise TypeError("a campaign's entries are added one by one (campaign.repos[name] = entry)")

    __delitem__ = pop = popitem = clear = update = setdefault = _refused


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
    repos: dict[str, RepoEntry] = Field(default_factory=dict)  # in rollout order
    waves_started: int = 0
    replan: list[str] = Field(default_factory=list)  # open jobs the next `resume` re-plans
    history: list[str] = Field(default_factory=list, max_length=200)
    tally: dict[str, int] = Field(default_factory=dict)  # the running counters (COUNTERS)
    next_order: int = 0

    _index: dict[RepoState, dict[str, None]] = PrivateAttr(default_factory=dict)
    _changed: set[str] = PrivateAttr(default_factory=set)

    @model_validator(mode="after")
    def _own_entries(self) -> Campaign:
        """Take the entries into a RepoTable; a record without (all) counters, as written
        before they existed, gets them counted once."""
        given = list(self.repos.values())
        trusted = set(self.tally) == set(COUNTERS)
        if not trusted:
            self.tally = dict.fromkeys(COUNTERS, 0)
        self._index = {state: {} for state in RepoState}
        table = RepoTable(self)
        for entry in sorted(given, key=lambda e: (e.order < 0, e.order)):
            table.attach(entry.name, entry, counted=not trusted)
        self.repos = table
        self._changed = set()
        return self

    def _leave(self, key: str, entry: RepoEntry) -> None:
        for counter, value in contribution(entry).items():
            self.tally[counter] -= value
        self._index[entry.state].pop(key, None)

    def _join(self, key: str, entry: RepoEntry, *, counted: bool = True) -> None:
        if counted:
            for counter, value in contribution(entry).items():
                self.tally[counter] += value
        self._index[entry.state][key] = None
        self._changed.add(key)

    def count(self, *states: RepoState) -> int:
        return sum(self.tally[f"state:{state}"] for state in states)

    def entries(self, *states: RepoState) -> list[RepoEntry]:
        """Every entry, or those in `states` (read from the per-state index, not a scan), in
        rollout order."""
        if not states:
            return list(self.repos.values())
        found = [self.repos[key] for state in set(states) for key in self._index[state]]
        return sorted(found, key=lambda entry: entry.order)

    def changed_names(self) -> set[str]:
        """The entries changed since the record was loaded or last saved."""
        return set(self._changed)

    def saved(self) -> None:
        self._changed = set()

    def log(self, at: datetime, message: str) -> None:
        """Keep the newest 200 lines of what happened."""
        self.history = [*self.history[-199:], f"{at:%Y-%m-%d %H:%M} {message}"]
        self.updated_at = at
