"""The job's environment: taken from the cache, or built once by `setup` in a pristine worktree.

`setup` runs in the sandbox (with the network when `network` is `setup` or `true`), in a
worktree at the job's base with nothing else in it; what it leaves there that git does not track
becomes the environment (jobs/adapters/environments.py) and the worktree is put back as it was.
Every later command gets it read-only, so it is never part of a diff and no batch can change
what the next job reuses.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jobs.adapters.environments import capture_outputs, digest_inputs, key_inputs
from jobs.adapters.toolchain import key_changes, setup_programs, toolchain_identity
from jobs.decisions.network_failure import network_cause
from jobs.features.environments.record import (
    EnvironmentRecord,
    environment_of,
    record_environment,
)
from jobs.inputs.config import RepoConfig
from jobs.inputs.globs import matches_any
from jobs.inputs.sandboxing import SandboxPolicy
from jobs.kernel.job import Job
from jobs.kernel.records import CommandEvidence, command_evidence
from jobs.ports import BuiltEnvironment, EnvironmentStore, Sandbox, Workspace


@dataclass(frozen=True)
class EnvironmentOutcome:
    """The environment (None without `setup`), setup's evidence when it ran, its failure."""

    environment: BuiltEnvironment | None
    evidence: tuple[CommandEvidence, ...] = ()
    failure: CommandEvidence | None = None


def job_environment_key(config: RepoConfig, *, tracked: Sequence[str],
                        read: Callable[[list[str]], Mapping[str, str | None]],
                        place: str = "", ref: str = "", commit: str = "") -> str:
    """The key of the environment `config.setup` builds (the digest of the inputs below)."""
    return digest_inputs(job_environment_inputs(config, tracked=tracked, read=read, place=place,
                                                ref=ref, commit=commit))


def job_environment_inputs(config: RepoConfig, *, tracked: Sequence[str],
                           read: Callable[[list[str]], Mapping[str, str | None]],
                           place: str = "", ref: str = "", commit: str = "") -> dict[str, object]:
    """What the key of `config.setup`'s environment is made of. `place` is the worktree's path when
    commands are not isolated (then nothing can be relocated and the path is part of the key).

    Nothing built from one branch serves another (`ref`, the job's base branch): an
    environment a contributor's branch built, `.pth` files and all, is never reused for the
    default branch. Which files setup reads is only known when `cache_key` names them; without
    it the key names the base `commit`, so a change to any file setup may read rebuilds."""
    chosen = sorted(path for path in tracked if matches_any(path, config.cache_key))
    contents = read(chosen) if chosen else {}
    files = {path: hashlib.sha256((text or "\0binary").encode()).hexdigest()
             for path, text in contents.items()}
    files[":ref"] = ref
    if not config.cache_key:
        files[":commit"] = commit
    network = "setup" if config.network == "setup" else str(bool(config.network)).lower()
    toolchain = toolchain_identity(setup_programs(config.setup_argvs()))
    return key_inputs(setup=config.setup, env=config.env, network=network, cache_files=files,
                      toolchain=f"{toolchain};{place}")


def ensure_environment(*, config: RepoConfig, key: str, cache: EnvironmentStore,
                       sandbox: Sandbox, policy: SandboxPolicy, worktree: Path,
                       untracked: Callable[[], list[str]],
                       inputs: Mapping[str, object] | None = None) -> EnvironmentOutcome:
    """The environment for `key`: from the cache (another worker may have built it while this
    one waited for the key's lock), or built now by `config.setup` run in `worktree`, a scratch
    worktree of the job's base that the caller removes afterwards (so whatever setup changed in
    tracked files goes with it)."""
    if not config.setup:
        return EnvironmentOutcome(None)
    with cache.building(key) as staging:
        found = cache.get(key)
        if found is not None:
            return EnvironmentOutcome(found)
        # Its outputs are what the cache keeps: they are written into the scratch worktree.
        setup_policy = replace(policy, network=config.setup_network, environment=None,
                               writes_through=True)
        evidence: list[CommandEvidence] = []
        for argv in config.setup_argvs():
            item = command_evidence(sandbox.run(argv, cwd=worktree, policy=setup_policy))
            evidence.append(item)
            if item.exit_code != 0 or item.timed_out:
                return EnvironmentOutcome(None, tuple(evidence), item)
        entries = capture_outputs(worktree, untracked(), staging / "tree")
        built = cache.commit(key, staging, entries=entries,
                             setup_evidence=[item.model_dump() for item in evidence],
                             inputs=inputs)
    return EnvironmentOutcome(built, tuple(evidence))


def prepare_job_environment(job: Job, *, repository: Workspace, cache: EnvironmentStore,
                            sandbox: Sandbox, policy: SandboxPolicy) -> EnvironmentOutcome:
    """The job's environment, recorded on `job`: from the cache under the key recorded at the
    job's first step, or built now by `setup` in a scratch worktree at the job's base (never the
    job's own worktree or head, whose files may hold a batch's edit: the key names the base, and
    the next job on that base reuses what is built). The key is computed once, from the
    `cache_key` files at the job's base, and kept, so every later step and worker agrees."""
    def inputs() -> dict[str, object]:
        return job_environment_inputs(
            job.config, tracked=repository.tracked_files(job.base_sha),
            read=lambda paths: repository.read_texts(job.base_sha, paths),
            ref=job.base_branch, commit=job.base_sha)

    recorded = environment_of(job)
    key = recorded.key if recorded is not None and not recorded.failed \
        else digest_inputs(inputs())
    found = cache.get(key)
    because: list[str] = []
    failed_before = ""
    if found is None:
        made_of = inputs()
        because = rebuild_reasons(cache.latest_inputs(), made_of, key=key)
        failed_before = cache.last_failure(key)
        scratch = repository.open_worktree(cache.root / f"scratch-{key}-{os.getpid()}",
                                           job.base_sha)
        try:
            outcome = ensure_environment(config=job.config, key=key, cache=cache,
                                         sandbox=sandbox, policy=policy, worktree=scratch.path,
                                         untracked=scratch.untracked_entries, inputs=made_of)
        finally:
            scratch.remove()
        if outcome.environment is None:
            if outcome.failure is not None:
                what = failure_words(outcome.failure)
                cache.record_failure(key, what=what, job=f"issue-{job.number}")
                record_environment(job, EnvironmentRecord(
                    key=key, setup=list(outcome.evidence), failed=what,
                    failed_before=failed_before))
            return outcome
        found = outcome.environment
        evidence = list(outcome.evidence)
    else:
        evidence = []
    cache.ready_caches(found)
    if recorded is None or recorded.key != key or recorded.failed:
        record_environment(job, EnvironmentRecord(
            key=key, from_cache=found.from_cache, entries=list(found.entries), setup=evidence,
            rebuilt_because=because, failed_before=failed_before))
    elif evidence:  # rebuilt on this worker: keep the newest setup evidence
        recorded.setup = evidence
    return EnvironmentOutcome(found, tuple(evidence))


def failure_words(failure: CommandEvidence) -> str:
    """What made setup fail, in one sentence: the network's part when it is the cause."""
    cause = network_cause(failure, who="setup")
    if cause is not None:
        return cause.what
    timed = " (timed out)" if failure.timed_out else ""
    return f"`{failure.display}` exited {failure.exit_code}{timed}"


def rebuild_reasons(previous: Mapping[str, object] | None, now: Mapping[str, object], *,
                    key: str) -> list[str]:
    """Why the environment for `key` is built: which input differs from the environment built
    last in this cache ([] for the first one)."""
    if previous is None:
        return []
    if digest_inputs(previous) == key:
        return ["the cached environment was evicted (STEPWISE_ENV_CACHE_MB)"]
    return key_changes(previous, now) or ["an input of the key"]
