"""The branch applier (jobs/engine/branch_sync.py) on a real git repository and file store,
with the in-memory forge: what reconcile() decided reaches the record and the forge in order."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from jobs.adapters.sandbox import make_sandbox
from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.adapters.worktree import BOT_IDENTITY
from jobs.basics.errors import RetryClass, StepwiseError
from jobs.engine import branch_sync
from jobs.engine.context import JobContext, Services
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.ports import Publication
from tests.kit.features import WITHOUT_BISECT
from tests.kit.forge import InMemoryForge
from tests.kit.records import make_batch, make_job
from tests.kit.repos import GIT_ENV, commit_all, git, make_repo, write_files


def context(tmp_path: Path) -> tuple[JobContext, Path, InMemoryForge]:
    repo = make_repo(tmp_path / "repo", {"a.py": "print(1)\n"})
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "branch", "stepwise/issue-7", head)
    repository = Repository(repo)
    forge = InMemoryForge()
    store = FileStore(repository.state_dir)
    job = make_job(status=JobStatus.RUNNING, batches=[make_batch(1, files=["a.py"])])
    job.base_sha = job.head_sha = head
    job = store.save(job)
    services = Services(repository=repository, store=store,
                        sandbox=make_sandbox(require_isolation=False), forge=forge,
                        features=WITHOUT_BISECT)
    return JobContext(services, job), repo, forge


def commit_on_branch(repo: Path, message: str) -> str:
    git(repo, "checkout", "-q", "stepwise/issue-7")
    write_files(repo, {"a.py": f"# {message}\n"})
    sha = commit_all(repo, message)
    git(repo, "checkout", "-q", "main")
    return sha


def as_stepwise(repo: Path, message: str) -> str:
    """Commit on the job branch as Stepwise does (its identity), recording nothing."""
    git(repo, "checkout", "-q", "stepwise/issue-7")
    write_files(repo, {"a.py": f"# {message}\n"})
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True,
                   env={**os.environ, **GIT_ENV, **BOT_IDENTITY})
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return sha


def stored(ctx: JobContext) -> Job:
    job = ctx.services.store.reload(ctx.job)
    assert job is not None
    return job


BATCH_1 = "batch 1\n\nStepwise-Job: 7-abc123def456\nStepwise-Batch: 1"


def test_our_batch_commit_is_adopted_saved_and_nothing_is_published(tmp_path: Path) -> None:
    ctx, repo, forge = context(tmp_path)
    sha = as_stepwise(repo, BATCH_1)
    ctx.job.trees_recorded, ctx.job.batch(1).tree = True, git(repo, "rev-parse", f"{sha}^{{tree}}")
    assert branch_sync.sync(ctx)
    job = stored(ctx)
    assert job.head_sha == sha and job.batch(1).status is BatchStatus.COMPLETED
    assert job.batch(1).adopted and forge.effects == []
    assert not branch_sync.sync(ctx)  # the branch is where the record says now


@pytest.mark.parametrize("forgery", ["a writer's commit", "Stepwise's identity, another tree"])
def test_a_commit_with_forged_trailers_opens_the_human_commit_gate(tmp_path: Path,
                                                                   forgery: str) -> None:
    """The job id and batch number are public: a writer's commit carrying them, or one made
    as Stepwise but not of the tree recorded before batch 1 landed, is not adopted."""
    ctx, repo, _ = context(tmp_path)
    ctx.job.trees_recorded, ctx.job.batch(1).tree = True, "0" * 40
    if forgery == "a writer's commit":
        sha = commit_on_branch(repo, BATCH_1)
        ctx.job.batch(1).tree = git(repo, "rev-parse", f"{sha}^{{tree}}")
    else:
        sha = as_stepwise(repo, BATCH_1)
    assert branch_sync.sync(ctx)
    job = stored(ctx)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert job.batch(1).status is BatchStatus.PENDING and not job.batch(1).adopted
    assert f"{sha[:7]} 'batch 1'" in job.gate.reason


def test_someone_elses_commit_opens_the_gate_owed_before_it_is_published(tmp_path: Path) -> None:
    ctx, repo, forge = context(tmp_path)
    before = ctx.job.head_sha
    commit_on_branch(repo, "fix typo")
    assert branch_sync.sync(ctx)
    job = stored(ctx)
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate is not None
    assert job.gate.kind is Gate.HUMAN_COMMIT and job.head_sha == before
    assert forge.actions() == ["expect:gate", "publish:gate"]
    assert "'fix typo'" in forge.published(Publication.GATE)[0]


def test_a_failed_gate_publication_leaves_the_gate_saved(tmp_path: Path) -> None:
    ctx, repo, forge = context(tmp_path)
    commit_on_branch(repo, "fix typo")
    outage = StepwiseError("GitHub answered 502", code="forge_unavailable",
                           retry_class=RetryClass.AUTO_RETRY)
    forge.fail_next(Publication.GATE, outage)
    with pytest.raises(StepwiseError, match="502"):
        branch_sync.sync(ctx)
    job = stored(ctx)  # the gate was saved before the publication was tried
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert forge.actions() == ["expect:gate"]


def test_a_deleted_branch_fails_the_job_without_retrying(tmp_path: Path) -> None:
    ctx, repo, _ = context(tmp_path)
    git(repo, "branch", "-D", "stepwise/issue-7")
    with pytest.raises(StepwiseError, match="no longer exists") as caught:
        branch_sync.sync(ctx)
    assert caught.value.retry_class is RetryClass.DO_NOT_RETRY


def forge_copy(repo: Path, of: str, message: str) -> str:
    """What a writer can push: a commit of `of`'s tree on the same parent, with our trailers,
    authored and committed under Stepwise's identity (git signs nothing)."""
    tree, parent = git(repo, "rev-parse", f"{of}^{{tree}}"), git(repo, "rev-parse", f"{of}^")
    out = subprocess.run(["git", "commit-tree", tree, "-p", parent, "-m", message], cwd=repo,
                         check=True, capture_output=True, text=True,
                         env={**os.environ, **GIT_ENV, **BOT_IDENTITY,
                              "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"})
    return out.stdout.strip()


def test_with_git_only_the_commit_stepwise_made_is_adopted_not_a_copy_of_it(
        tmp_path: Path) -> None:
    """Batch 1's tree and the id of the commit made to land it are recorded before the push;
    the push never happened (the worker died). A writer pushes a copy: the job id and batch
    trailers, Stepwise's identity and exactly the validated tree, but another id. It is a
    human commit; the commit Stepwise made is adopted."""
    ctx, repo, _ = context(tmp_path)
    made = as_stepwise(repo, BATCH_1)
    forged = forge_copy(repo, made, BATCH_1 + "\n")
    assert forged != made and git(repo, "rev-parse", f"{forged}^{{tree}}") == \
        git(repo, "rev-parse", f"{made}^{{tree}}")
    ctx.job.trees_recorded, ctx.job.batch(1).tree = True, git(repo, "rev-parse", f"{made}^{{tree}}")
    ctx.job.landing_commits = [made]
    git(repo, "update-ref", "refs/heads/stepwise/issue-7", forged)
    assert branch_sync.sync(ctx)
    job = stored(ctx)
    assert job.gate is not None and job.gate.kind is Gate.HUMAN_COMMIT
    assert f"{forged[:7]} 'batch 1'" in job.gate.reason
    assert job.batch(1).status is BatchStatus.PENDING and not job.batch(1).adopted

    ctx, repo, _ = context(tmp_path / "control")
    made = as_stepwise(repo, BATCH_1)
    ctx.job.trees_recorded, ctx.job.batch(1).tree = True, git(repo, "rev-parse", f"{made}^{{tree}}")
    ctx.job.landing_commits = [made]
    assert branch_sync.sync(ctx)
    job = stored(ctx)
    assert job.gate is None and job.batch(1).adopted and job.batch(1).commit == made
