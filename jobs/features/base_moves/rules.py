"""What to do when the base branch moved under a job: a pure decision, applied by the engine.

`decide_base_update(job, facts)` reads what git says about the base (its new head, whether the
branch already contains it, which files a merge would conflict in) and the repository's
`update_from_base` policy, and answers: nothing, a merge, a merge that replays the recipe of
some completed batches on the base's version of their conflicting files, or the `conflict`
gate naming the files no recipe can replay. The engine gathers the facts and carries the
decision out (jobs/features/base_moves/merge.py); nothing here runs git.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from jobs.features.base_moves.record import moves
from jobs.inputs.recipes import rules_for
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus


class BaseAction(StrEnum):
    NOTHING = "nothing"  # the branch is up to date enough for the policy
    MERGE = "merge"  # a clean merge commit
    REPLAY = "replay"  # a merge whose conflicts are resolved by replaying recipes
    CONFLICT = "conflict"  # the `conflict` gate: a human resolves it on the branch


@dataclass(frozen=True)
class BaseFacts:
    """The base as git sees it at a safe point. `conflicts` lists the files a merge of
    `base_sha` into the job head would conflict in (empty: clean); `absent_at_base` those of
    them the base deleted; `strict`: the base's protection requires up-to-date branches."""

    base_sha: str
    contained: bool  # the job branch already holds `base_sha`
    conflicts: tuple[str, ...] = ()
    absent_at_base: frozenset[str] = frozenset()
    strict: bool = False


@dataclass(frozen=True)
class Replay:
    """Run batch `batch`'s recipe again on the base's version of `files`."""

    batch: int
    files: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class BaseDecision:
    action: BaseAction
    base_sha: str
    reason: str = ""
    replays: tuple[Replay, ...] = ()
    unreplayable: tuple[str, ...] = ()  # CONFLICT: the files no recipe can replay, and why


def decide_base_update(job: Job, facts: BaseFacts) -> BaseDecision:
    """What `job` does about the base at `facts.base_sha` (see the module docstring)."""
    policy = job.config.update_from_base
    base = facts.base_sha
    short = f"`{job.base_branch}` moved to {base[:7]}"
    if policy == "never" or facts.contained:
        return BaseDecision(BaseAction.NOTHING, base)
    if base == moves(job).declined:
        return BaseDecision(BaseAction.NOTHING, base, f"{short}; not merged: a maintainer let "
                            "its failed merge pass")
    if not facts.conflicts:
        if policy == "behind":
            return BaseDecision(BaseAction.MERGE, base, f"{short} (update_from_base: behind)")
        if facts.strict:
            return BaseDecision(BaseAction.MERGE, base,
                                f"{short} and its protection requires up-to-date branches")
        return BaseDecision(BaseAction.NOTHING, base, f"{short}; not merged: the merge is "
                            "clean (update_from_base: conflicted)")
    replays: dict[int, list[str]] = {}
    unreplayable: list[str] = []
    for path in facts.conflicts:
        owner, why = _owner(job, path, facts)
        if owner is None:
            unreplayable.append(f"{path} ({why})")
        else:
            replays.setdefault(owner, []).append(path)
    if unreplayable:
        return BaseDecision(BaseAction.CONFLICT, base,
                            f"{short} and merging it conflicts in {len(facts.conflicts)} "
                            "file(s) no recipe can replay", unreplayable=tuple(unreplayable))
    return BaseDecision(BaseAction.REPLAY, base, f"{short} and merging it conflicts in files "
                        "of completed batches", replays=tuple(
                            Replay(number, tuple(files), f"the base changed {', '.join(files)}, "
                                   f"which batch {number} edited")
                            for number, files in sorted(replays.items())))


def _owner(job: Job, path: str, facts: BaseFacts) -> tuple[int | None, str]:
    """The completed batch whose recipe can replay `path`, or None and the reason it cannot."""
    if path in facts.absent_at_base:
        return None, "the base deleted it"
    for batch in job.batches:
        edited = batch.changed_files or batch.files
        if path not in edited:
            continue
        if batch.status is not BatchStatus.COMPLETED:
            continue
        if not rules_for(job.spec.recipe).replayable:
            return None, f"batch {batch.number} is an `{job.spec.recipe}` batch"
        if job.spec.fallback == "llm":  # a model may have edited it: not replayed either
            return None, f"batch {batch.number} is a `command` batch with `fallback: llm`"
        return batch.number, ""
    return None, "outside every completed batch"


def resolve_commands(*, branch: str, base_branch: str, local: bool) -> str:
    """The git commands a maintainer runs to resolve the conflict on the branch."""
    if local:
        return (f"git switch {branch}\ngit merge {base_branch}\n"
                "# resolve the conflicts, then:\ngit add -A && git commit\n"
                f"git switch {base_branch}")
    return (f"git fetch origin\ngit switch {branch}\ngit merge origin/{base_branch}\n"
            f"# resolve the conflicts, then:\ngit add -A && git commit\ngit push origin {branch}")
