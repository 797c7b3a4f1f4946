"""The record part of split batches (bisection): which subsets of a failed batch were validated
with which result, what was set aside, and why (pydantic, no I/O). The rules that read and
extend it live in jobs/features/bisect/."""

from __future__ import annotations

from typing import Literal

from jobs.kernel.records import CommandEvidence, Record

# culprit: fails alone; interaction: passes alone, fails with the other files named;
# targets_remain: the edit left `find` matches in it (done_when: no_matches).
CauseKind = Literal["culprit", "interaction", "targets_remain"]


class SubsetResult(Record):
    """One validated candidate tree: the base plus the edits of `files`."""

    files: list[str]
    passed: bool
    tree: str = ""
    failed_command: str = ""  # the first command that failed, when it did
    commands: list[CommandEvidence] = []  # kept for a passing subset: a commit's evidence
    # Run on the failing tests only: the command run instead of the whole validation (a
    # failure proves the subset fails; a pass is confirmed by a whole validation).
    focus: list[str] = []
    # A whole validation that failed and named its failing tests: the command that runs only
    # those, which its parts are validated on first (empty: the whole validation).
    refocus: list[str] = []


class SplitCause(Record):
    """Files set aside from a split batch, and why."""

    files: list[str]
    kind: CauseKind


class SplitState(Record):
    """A failed multi-file batch being split: kept after every validation, so a crash resumes
    the bisection without validating a decided subset again."""

    files: list[str]  # every file of the batch as planned
    edited_tree: str  # the failing attempt's tree: each subset takes its files from it
    reason: str  # why it was split: the failure of the whole batch
    alone: bool = False  # each file validated alone first (a small batch), else halves
    how: str = ""  # how it was split, in words (the plan: jobs/features/bisect/strategy.py)
    results: list[SubsetResult] = []
    causes: list[SplitCause] = []  # decided once the bisection ends
    finished: bool = False
    gave_up: str = ""  # the bisection stopped without an answer (the failure gate opened)
    committed: bool = False  # its passing files were committed (or it had none)
    # A red CI check split it (`ci.wait: per_batch`): each subset that passes locally is pushed
    # as a candidate commit and validated by CI too; `named` are the batch's files the failing
    # checks' annotations name (validated without them first).
    by_ci: bool = False
    named: list[str] = []
    candidate: SubsetResult | None = None  # passed locally; CI runs on `candidate_sha`
    candidate_sha: str = ""

    @property
    def set_aside(self) -> list[str]:
        return [path for cause in self.causes for path in cause.files]

    def result_of(self, files: list[str]) -> SubsetResult | None:
        """The latest whole validation of exactly these files."""
        wanted = frozenset(files)
        return next((r for r in reversed(self.results)
                     if frozenset(r.files) == wanted and not r.focus), None)


def cause_words(kind: str, files: list[str], *, by_ci: bool = False) -> str:
    """How the card, the gate and the note name one set-aside group of files (`by_ci`: a red
    CI check split the batch, so CI is what these files fail, not the local validation)."""
    named = ", ".join(f"`{path}`" for path in files)
    judge = "CI" if by_ci else "validation"
    if kind == "interaction":
        return f"{named} pass alone and fail {judge} together (an interaction)"
    if kind == "targets_remain":
        return f"{named}: `find` matches remain after the edit"
    return f"{named} fails {judge} alone"
