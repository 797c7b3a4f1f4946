"""A job's worktree outlives its steps while it runs; the default egress allowlist is listed once per base."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.adapters.allowlist_cache import admitted, allowlist_path, cached_commit_hosts
from jobs.adapters.sandbox import make_sandbox
from jobs.adapters.store import FileStore
from jobs.adapters.workspace import Repository
from jobs.engine.context import JobContext, Services
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from tests.kit.features import WITHOUT_BISECT
from tests.kit.forge import InMemoryForge
from tests.kit.records import make_job
from tests.kit.registries import isolate_operator
from tests.kit.repos import commit_all, git, make_repo, write_files

FILES: dict[str, str | bytes] = {"a.py": "x = 1\n", "pkg/b.py": "y = 2\n",
                                 "requirements.txt": "six\n"}


def services(repository: Repository) -> Services:
    return Services(repository=repository, store=FileStore(repository.state_dir),
                    sandbox=make_sandbox(require_isolation=False), forge=InMemoryForge(),
                    features=WITHOUT_BISECT)


def job_at(repository: Repository, status: JobStatus = JobStatus.RUNNING) -> Job:
    head = repository.resolve("HEAD") or ""
    job = make_job(status=status)
    job.base_sha = job.head_sha = head
    return job


@pytest.fixture
def repository(tmp_path: Path) -> Repository:
    return Repository(make_repo(tmp_path / "repo", FILES))


def test_the_worktree_stays_while_the_job_runs_and_goes_at_a_gate(repository: Repository,
                                                                  tmp_path: Path) -> None:
    job = job_at(repository)
    step = JobContext(services(repository), job)
    where = step.worktree.path
    os.link(where / "pkg/b.py", tmp_path / "b-link")  # the same file if it is not checked out
    (where / "left-by-a-command.txt").write_text("x\n")
    step.close()
    assert where.is_dir()
    following = JobContext(services(repository), job)
    assert following.worktree.path == where
    assert not (where / "left-by-a-command.txt").exists()
    assert (where / "pkg/b.py").stat().st_nlink == 2
    job.status = JobStatus.AWAITING_HUMAN
    following.close()
    assert not where.exists()
    assert not where.with_name(f"{where.name}.git").exists()


def test_an_ended_job_removes_its_worktree(repository: Repository) -> None:
    job = job_at(repository)
    step = JobContext(services(repository), job)
    where = step.worktree.path
    job.status = JobStatus.COMPLETED
    step.close()
    assert not where.exists()


def test_a_worker_that_does_not_hold_the_worktree_checks_it_out(repository: Repository,
                                                               tmp_path: Path) -> None:
    job = job_at(repository)
    first = JobContext(services(repository), job)
    kept = first.worktree.path
    first.close()
    other_disk = tmp_path / "other-worker"
    git(tmp_path, "clone", "--quiet", "--bare", str(repository.root), str(other_disk))
    elsewhere = Repository(other_disk)
    second = JobContext(services(elsewhere), job)
    assert second.worktree.path != kept
    assert (second.worktree.path / "pkg/b.py").read_text() == "y = 2\n"
    assert second.worktree.head == job.head_sha
    assert kept.is_dir()  # the first worker's copy is its own


def test_a_kept_worktree_follows_the_recorded_head(repository: Repository) -> None:
    job = job_at(repository)
    first = JobContext(services(repository), job)
    first.worktree.path  # noqa: B018 - opens it
    first.close()
    write_files(repository.root, {"pkg/b.py": "y = 3\n"})
    job.head_sha = commit_all(repository.root, "moved on")
    second = JobContext(services(repository), job)
    assert (second.worktree.path / "pkg/b.py").read_text() == "y = 3\n"
    assert second.worktree.staged_paths() == []


class CountingRepository(Repository):
    listings = 0

    def tracked_files(self, sha: str) -> list[str]:
        CountingRepository.listings += 1
        return super().tracked_files(sha)


def test_the_default_allowlist_is_listed_once_per_base(
        repository: Repository, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_operator(monkeypatch, tmp_path / "operator")
    counting = CountingRepository(repository.root)
    job = job_at(counting)
    job.config = job.config.model_copy(update={"network": True, "network_allow": []})
    hosts = JobContext(services(counting), job).network_allow()
    assert hosts == ["pypi.org", "files.pythonhosted.org"]
    assert JobContext(services(counting), job).network_allow() == hosts
    assert CountingRepository.listings == 1
    assert allowlist_path(counting, job.base_sha).is_file()
    write_files(repository.root, {"package.json": "{}\n"})
    newer = commit_all(repository.root, "node too")
    assert "registry.npmjs.org" in admitted(cached_commit_hosts(counting, newer))
    assert CountingRepository.listings == 2


def test_an_unreadable_cached_allowlist_is_computed_again(repository: Repository) -> None:
    sha = repository.resolve("HEAD") or ""
    path = allowlist_path(repository, sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    assert admitted(cached_commit_hosts(repository, sha)) == ["pypi.org", "files.pythonhosted.org"]


def test_a_configured_index_joins_the_default_and_reaches_the_commands(
        repository: Repository, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_operator(monkeypatch, tmp_path / "operator")
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://me:token@private.example/simple")
    job = job_at(repository)
    job.config = job.config.model_copy(update={"network": "setup", "network_allow": []})
    context = JobContext(services(repository), job)
    assert context.network_allow() == ["pypi.org", "files.pythonhosted.org", "mirror.example",
                                       "private.example"]
    assert [(h.host, h.why) for h in job.network_hosts][2:] == [
        ("mirror.example", "PIP_INDEX_URL"), ("private.example", "PIP_EXTRA_INDEX_URL")]
    # The index variable reaches the commands; the one holding a credential does not.
    assert context.runner.policy.env["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert "PIP_EXTRA_INDEX_URL" not in context.runner.policy.env
    # With `network_allow` set, it is the whole list and nothing is added.
    job.config = job.config.model_copy(update={"network_allow": ["corp.example"]})
    assert JobContext(services(repository), job).network_allow() == ["corp.example"]
    assert job.network_hosts == []
