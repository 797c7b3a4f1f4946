"""Starting a job: where it starts (a branch, its commit, its config) and its new record."""

from __future__ import annotations

import stat
import uuid

from jobs.basics.errors import BadInputError
from jobs.engine.context import Base, Services
from jobs.engine.discovery import nothing_matches_error, plan_scope, targets_at
from jobs.engine.recover import find_orphan
from jobs.inputs.config import CONFIG_PATH, RepoConfig, load_config
from jobs.inputs.programs import refusal_reason, split_command
from jobs.inputs.spec import IssueTask, TaskSpec
from jobs.kernel.job import Job
from jobs.kernel.model import FINISHED_BATCH_STATUSES, BatchStatus
from jobs.ports import Workspace

WORKING_TREE = "working tree"
MAX_CONFIG_BYTES = 64 * 1024


def working_config_text(repo: Workspace) -> str | None:
    """The checkout's own `.github/stepwise.yml` (a regular file, not a link), or None."""
    path = repo.root / CONFIG_PATH
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES + 1:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def local_config(repo: Workspace, sha: str) -> tuple[RepoConfig, str | None]:
    """Local mode's config: the working tree's `.github/stepwise.yml` when it differs from the
    one committed at `sha` (what the user just edited is what they mean), else the commit's;
    and where it came from (None: the commit)."""
    committed = repo.show_file(sha, CONFIG_PATH)
    working = working_config_text(repo)
    if working is not None and working != committed:
        source = f"{CONFIG_PATH} (working tree, not committed)"
        return load_config(working, source=source), WORKING_TREE
    return load_config(committed), None


def local_base(repo: Workspace) -> Base:
    """The checkout's current branch and commit (local mode), and its config."""
    sha = repo.resolve("HEAD")
    if sha is None:
        raise BadInputError("the repository has no commits yet",
                            hint="commit your code first; Stepwise works from a commit")
    config, source = local_config(repo, sha)
    return Base(branch=repo.current_branch() or "HEAD", sha=sha, config=config,
                config_source=source)


def number_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> "1–3, 5"."""
    parts: list[str] = []
    start = prev = numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if number is not None:
            start = prev = number
    return ", ".join(parts)


def resume_message(job: Job) -> str:
    """"Resumed at batch 7 of 12; batches 1–6 are committed" (from the record, not a guess)."""
    done = [b.number for b in job.batches if b.status is BatchStatus.COMPLETED]
    nxt = next((b.number for b in job.batches if b.status not in FINISHED_BATCH_STATUSES), None)
    planning = not job.batches or (job.baseline_ok is None
                                   and not any(b.attempts for b in job.batches))
    where = "planning (the plan and its baseline were not finished)" if planning else \
        f"batch {nxt} of {len(job.batches)}" if nxt else "the final review"
    committed = "no batch is committed yet" if not done else (
        f"batch {done[0]} is committed" if len(done) == 1 else
        f"batches {number_ranges(done)} are committed")
    return f"Resumed at {where} after an interruption; {committed}."


def check_runnable(issue: IssueTask, config: RepoConfig) -> None:
    """Refuse at once (bad input) a `run` program the config would refuse at every batch."""
    if issue.spec.run is not None:
        refusal = refusal_reason(split_command(issue.spec.run), config.allow_commands)
        if refusal is not None:
            raise BadInputError(f"spec field `run` cannot run: {refusal}",
                                hint="use an allowed program, or allow it in .github/stepwise.yml",
                                code="invalid_spec")


def start_checks(services: Services, spec: TaskSpec) -> None:
    """Each feature's check that it can run `spec`: BadInputError (exit 2) naming what is
    missing (llm: no model endpoint)."""
    for feature in services.features:
        if feature.start_check is not None:
            feature.start_check(services, spec)


def refuse_nothing_to_change(repo: Workspace, base: Base, spec: TaskSpec, scope: list[str], *,
                             repo_name: str | None) -> None:
    """Refuse (bad input, exit 2; on GitHub a comment, nothing created) a `find` that matches
    nothing in scope at the base: such a job would change nothing, so it never starts."""
    if not spec.find or targets_at(repo, base.sha, scope, spec.find):
        return
    branch = f"branch {base.branch}" if base.branch != "HEAD" else "a detached HEAD"
    where = f"in {repo_name} at {base.sha[:7]} ({branch})" if repo_name else \
        f"in this checkout at {base.sha[:7]} ({branch})"
    raise nothing_matches_error(spec, scope, where=where, not_made=(
        "no branch, change note or pull request" if repo_name else "no branch, no change note"))


def create_job(issue: IssueTask, number: int, services: Services, *,
               base: Base | None = None, repo_name: str | None = None,
               recover: bool = True) -> Job:
    """A new job record for `issue`, on a new branch at `base` (default: the checkout's HEAD)."""
    repo = services.repository
    start_checks(services, issue.spec)
    base = base or local_base(repo)
    base_sha, config = base.sha, base.config
    check_runnable(issue, config)
    scope, _ = plan_scope(repo, base_sha, issue.spec, config)  # a plan that can change nothing: exit 2
    now = services.clock()
    job_id = f"{number}-{uuid.uuid4().hex[:12]}"
    note_path = f"{config.notes_dir}/{now:%Y%m%dT%H%M%SZ}-issue-{number}.md"
    # Recover a job whose record was lost; never when its record exists (e.g. it completed).
    orphan = find_orphan(repo, number, issue.spec.digest(), config.notes_dir) if recover else None
    if orphan is not None:
        # The record was lost but the branch remembers: same id, so its batches are adopted.
        job_id, branch, base_sha = orphan.job_id, orphan.branch, orphan.base_sha
        now = orphan.created_at or now
        note_path = orphan.note_path or note_path
    else:
        refuse_nothing_to_change(repo, base, issue.spec, scope, repo_name=repo_name)
        branch = f"stepwise/issue-{number}"
        run = 1
        while repo.branch_head(branch) is not None:
            run += 1
            branch = f"stepwise/issue-{number}-{run}"
        repo.create_branch(branch, base_sha)
    return Job(
        id=job_id, number=number, title=issue.title,
        repo=repo_name or str(repo.root), created_at=now, updated_at=services.clock(), spec=issue.spec,
        spec_digest=issue.spec.digest(), spec_text=issue.spec_text, config=config,
        base_branch=base.branch, base_sha=base_sha, branch=branch,
        head_sha=base_sha, note_path=note_path, config_source=base.config_source,
        trees_recorded=orphan is None,  # a rebuilt record knows no tree of what it finds
    )

