"""The engine side of base_moves: when the base branch moved, gather the facts at a safe point
(`update_from_base`, the feature's safe-point hook) and apply `decide_base_update`.

Nothing, a merge commit validated like a batch, a merge whose conflicting files are first
replayed by their batch's recipe (on the base's version, through the editor, the guard and the
sandbox a batch uses), or the `conflict` gate. A merge is recorded before its push and found
again by its trailers, so a worker that dies during a merge never leaves a second one.
"""

from __future__ import annotations

from jobs.adapters.merging import MergePreview, absent_paths, commit_merge, preview_merge
from jobs.basics.errors import WORKFLOW_PERMISSION, ErrorInfo, RetryClass, StepwiseError
from jobs.decisions.guard import check_diff
from jobs.engine.attempt import guard_policy
from jobs.engine.context import JobContext
from jobs.features.base_moves.parts import BASE_MERGE, CONFLICT
from jobs.features.base_moves.port import requires_up_to_date
from jobs.features.base_moves.record import BaseConflict, BaseMerge, ReplayedBatch, moves
from jobs.features.base_moves.rules import (
    BaseAction,
    BaseDecision,
    BaseFacts,
    decide_base_update,
)
from jobs.features.base_moves.texts import (
    conflict_reason,
    merge_message,
    moved_notice,
    workflow_refused_reason,
)
from jobs.inputs.spec import DoneWhen
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.records import CommandEvidence
from jobs.notes.progress import render_card
from jobs.ports import Publication
from jobs.recipes import EditError, EditRequest

MERGE_FAILED = "base_merge_failed"


def follows_a_base(job: Job) -> bool:
    """Whether the safe-point hook can have anything to do for `job`: it started from a branch
    of its own base (not a detached HEAD, not its own branch) and either merges the moved base
    (`update_from_base` is not `never`) or has a merge or a conflict of the base on record to
    keep in step with its branch (a merge that never landed, a conflict a maintainer resolved)."""
    if job.base_branch in ("HEAD", job.branch):
        return False
    part = moves(job)
    return job.config.update_from_base != "never" or bool(part.merges) or part.conflict is not None


def update_from_base(engine: JobContext) -> bool:
    """Bring the moved base into the branch if the policy says so; True when the step did
    something (a merge, or a gate opened) and the loop should look again."""
    job, repo = engine.job, engine.services.repository
    if job.base_branch == "HEAD" or job.base_branch == job.branch:
        return False  # a detached start has no branch to follow
    _forget_unlanded(engine)
    base = repo.branch_head(job.base_branch)
    if base is None:
        return False
    conflict = moves(job).conflict
    if conflict is not None and repo.is_ancestor(conflict.base_sha, job.head_sha):
        _record_human_merge(engine)
    if _pair(base, job.head_sha) == moves(job).checked or job.config.update_from_base == "never":
        return False
    if repo.is_ancestor(base, job.head_sha):
        return _checked(engine, base)
    preview = preview_merge(repo, head=job.head_sha, base=base)
    facts = BaseFacts(base_sha=base, contained=False, conflicts=preview.conflicts,
                      absent_at_base=absent_paths(repo, base, preview.conflicts),
                      strict=preview.clean and job.config.update_from_base == "conflicted"
                      and requires_up_to_date(engine))
    decision = decide_base_update(job, facts)
    if decision.action is BaseAction.NOTHING:
        if decision.reason and not (moves(job).checked or "").startswith(f"{base}.."):
            engine.publish(Publication.NOTICE, decision.reason)  # once per base commit
        return _checked(engine, base)
    if decision.action is BaseAction.CONFLICT:
        before = moves(job).conflict  # (a resolved one was recorded above)
        again = before is not None and before.base_sha == base
        moves(job).conflict = BaseConflict(base_sha=base, files=list(preview.conflicts))
        reason = conflict_reason(job, decision, local=not repo.bare)
        engine.open(CONFLICT, ("approved, but the branch does not hold the merge yet: "
                                    if again else "") + reason, touched=())
        return True
    _merge(engine, decision, preview)
    return True


def moved_base_notice(engine: JobContext) -> str | None:
    """For a job waiting at a gate: a line saying its base moved, or None (nothing to say)."""
    job, repo = engine.job, engine.services.repository
    if job.status is not JobStatus.AWAITING_HUMAN or job.base_branch in ("HEAD", job.branch) \
            or job.config.update_from_base == "never":
        return None
    base = repo.branch_head(job.base_branch)
    if base is None or repo.is_ancestor(base, job.head_sha):
        return None
    return moved_notice(job, base)


def _pair(base: str, head: str) -> str:
    return f"{base}..{head}"


def _checked(engine: JobContext, base: str) -> bool:
    """Remember that `base` needs no merge into this head, so the next safe point does not
    ask git again (a new batch commit may conflict where the last one did not). Kept with
    the step's next save (the batch's start, a gate, the end), not one of its own: if it is
    lost, git is asked again."""
    job = engine.job
    part = moves(job)
    part.checked, part.moved_at = _pair(base, job.head_sha), None
    return False


def _forget_unlanded(engine: JobContext) -> None:
    """A merge recorded by a worker that died before (or whose push failed) pushing it."""
    job, repo = engine.job, engine.services.repository
    merges = moves(job).merges
    if merges and not repo.is_ancestor(merges[-1].commit, job.head_sha):
        dropped = merges.pop()
        engine.event("base_merge", f"merge {dropped.commit[:7]} never reached the branch; "
                     "merging again")
        engine.save(touched=())


def _record_human_merge(engine: JobContext) -> None:
    job = engine.job
    conflict = moves(job).conflict
    assert conflict is not None
    moves(job).merges.append(BaseMerge(base_sha=conflict.base_sha, commit=job.head_sha,
                                     at=engine.now(), by="human"))
    moves(job).conflict = None
    engine.event("base_merge", f"the conflict with the base {conflict.base_sha[:7]} was "
                 f"resolved on the branch at {job.head_sha[:7]}")
    engine.save(touched=())


def _merge(engine: JobContext, decision: BaseDecision, preview: MergePreview) -> None:
    job, repo = engine.job, engine.services.repository
    base = decision.base_sha
    replays = "".join(f"; replaying batch {r.batch}: {r.reason}" for r in decision.replays)
    engine.publish(Publication.NOTICE, f"{decision.reason}: merging it into `{job.branch}`"
                   + replays)
    tree, ran = preview.tree, dict[int, list[CommandEvidence]]()
    if decision.replays:
        replayed = _replay(engine, decision, preview)
        if isinstance(replayed, ErrorInfo):
            _fail(engine, decision, replayed)
            return
        tree, ran = replayed
    worktree = engine.worktree
    worktree.restore(tree)
    evidence, failure, code = engine.runner.validate(job, tree)
    if failure is not None:
        _fail(engine, decision, ErrorInfo(
            code=MERGE_FAILED, retry_class=RetryClass.NEEDS_HUMAN,
            message=f"the merge of `{job.base_branch}` ({base[:7]}) fails validation: "
                    f"`{failure.display}` exited {failure.exit_code}"
                    + (" (setup)" if code == "setup_failed" else ""),
            hint="nothing was pushed; fix the base (or the branch) and {{retry}}, or "
                 "{{approve}} to go on without merging it until the base moves again",
            evidence={"base_sha": base, "command": failure.display,
                      "exit_code": failure.exit_code, "output_tail": failure.output_tail,
                      "commands": [c.model_dump(mode="json") for c in evidence]}))
        return
    commit = commit_merge(repo, tree=tree, head=job.head_sha, base=base,
                          message=merge_message(job, base, decision))
    moves(job).merges.append(BaseMerge(
        base_sha=base, commit=commit, at=engine.now(), commands=list(evidence),
        replayed=[ReplayedBatch(batch=r.batch, files=list(r.files), reason=r.reason,
                                commands=ran.get(r.batch, [])) for r in decision.replays]))
    engine.save(touched=())  # recorded before the push: a worker dying now finds it again
    try:
        landed = engine.land(commit)
    except StepwiseError as exc:  # refused (someone pushed meanwhile): it never landed
        moves(job).merges.pop()
        engine.save(touched=())
        if exc.code == WORKFLOW_PERMISSION:  # no retry helps: a person merges, or grants it
            _workflows_refused(engine, base, commit, exc.message)
            return
        raise
    commit = landed
    moves(job).merges[-1].commit = commit  # the sha it landed as (server mode: GitHub's)
    job.head_sha = commit
    part = moves(job)
    part.checked, part.moved_at, part.conflict = _pair(base, commit), None, None
    engine.event("base_merge", f"merged the base {base[:7]} in {commit[:7]}")
    engine.save(touched=())
    engine.publish(Publication.PROGRESS, render_card(job))


def _workflows_refused(engine: JobContext, base: str, merge: str, message: str) -> None:
    job, repo = engine.job, engine.services.repository
    out = repo.git("diff-tree", "-r", "--name-only", "-z", "--no-renames", job.head_sha, merge,
                   "--", ".github/workflows")
    files = [path for path in out.split("\0") if path]
    engine.worktree.reset(job.head_sha)
    moves(job).conflict = BaseConflict(base_sha=base, files=files)
    engine.open(CONFLICT, workflow_refused_reason(job, base, files, message), touched=())


def _fail(engine: JobContext, decision: BaseDecision, report: ErrorInfo) -> None:
    engine.worktree.reset(engine.job.head_sha)
    engine.open(Gate.FAILURE, f"merging `{engine.job.base_branch}` ({decision.base_sha[:7]}) "
                "into the branch failed", report=report, touched=(), cause=BASE_MERGE)


def _replay(engine: JobContext, decision: BaseDecision, preview: MergePreview
            ) -> tuple[str, dict[int, list[CommandEvidence]]] | ErrorInfo:
    """The merged tree with each conflicting file replaced by its batch's recipe run on the
    base's version, and what each recipe ran; or why the replay failed."""
    job, runner, worktree = engine.job, engine.runner, engine.worktree
    base = decision.base_sha
    files = [path for replay in decision.replays for path in replay.files]
    worktree.reset(base)
    if runner.cached_environments and (failure := runner.ensure_setup(job)) is not None:
        return _replay_error(base, f"setup failed before the replay: `{failure.display}` "
                             f"exited {failure.exit_code}", {"output_tail": failure.output_tail})
    ran: dict[int, list[CommandEvidence]] = {}
    for replay in decision.replays:
        request = EditRequest(
            worktree=worktree.path, files=replay.files, spec=job.spec, goal=job.title,
            targets=tuple(runner.remaining(job, base, list(replay.files))),
            instructions=tuple(job.instructions), policy=runner.policy)
        try:
            ran[replay.batch] = list(runner.editor.apply(request).commands)
        except EditError as exc:
            return _replay_error(base, f"replaying batch {replay.batch} failed: {exc.message}",
                                 exc.evidence)
    worktree.stage_all()
    approved = [gate for r in decision.replays for gate in job.batch(r.batch).approved_gates]
    verdict = check_diff(worktree.staged_diff(), batch_files=files,
                         scope_files=set(job.scope_files), policy=guard_policy(job.config,
                                                                               approved))
    if verdict.violations or verdict.gate is not None:
        return _replay_error(base, "the replayed edit was refused by the diff guard:\n"
                             + verdict.describe(), {})
    left = [str(t) for t in runner.remaining(job, worktree.write_tree(), files)]
    if left and job.spec.done_when is DoneWhen.NO_MATCHES:
        return _replay_error(base, f"{len(left)} targets still match after the replay: "
                             + ", ".join(left[:10]), {"remaining": left[:50]})
    entries = worktree.git("ls-files", "-s", "-z", "--", *files)
    worktree.restore(preview.tree)  # the merge, conflict markers in the replayed files
    worktree.git("update-index", "-z", "--index-info", stdin=entries)
    return worktree.write_tree(), ran


def _replay_error(base: str, message: str, evidence: dict[str, object]) -> ErrorInfo:
    return ErrorInfo(code=MERGE_FAILED, retry_class=RetryClass.NEEDS_HUMAN, message=message,
                     hint="nothing was pushed; merge the base into the branch by hand and "
                          "{{retry}}, or {{approve}} to go on without it until the base moves again",
                     evidence={**evidence, "base_sha": base})
