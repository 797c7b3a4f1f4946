"""A failed build is remembered (never cached as good) until a build of the same key succeeds;
the plan says what failed last time."""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.environments import EnvironmentCache
from jobs.features.environments.build import failure_words
from jobs.features.environments.record import (
    EnvironmentRecord,
    environment_of,
    record_environment,
)
from jobs.features.environments.texts import setup_lines
from jobs.inputs.config import RepoConfig
from jobs.kernel.gates import open_gate, reload_config
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.records import CommandEvidence
from tests.kit.records import T0, make_job

REFUSED = CommandEvidence(argv=["pip", "install", "x"], exit_code=1, duration_s=1.0,
                          egress=["pypi.org:443 refused: pypi.org:443 is not on network_allow"])


def test_a_failure_is_kept_until_the_key_is_built(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path / "envs", limit_bytes=2**30)
    assert cache.last_failure("k1") == ""
    cache.record_failure("k1", what=failure_words(REFUSED), job="issue-4")
    assert cache.last_failure("k1") == \
        "issue-4: setup could not reach pypi.org:443 (not on `network_allow`)"
    assert cache.get("k1") is None and cache.last_failure("k2") == ""
    with cache.building("k1") as staging:
        cache.commit("k1", staging, entries=[], setup_evidence=[])
    assert cache.last_failure("k1") == "" and cache.get("k1") is not None


def test_failure_words_without_the_network() -> None:
    plain = REFUSED.model_copy(update={"egress": [], "timed_out": True})
    assert failure_words(plain) == "`pip install x` exited 1 (timed out)"


def test_the_plan_says_what_failed_now_and_last_time() -> None:
    job = make_job()
    job.config = RepoConfig(setup=["pip install x"], allow_commands=["pip", "python", "ruff"],
                            network="setup")
    record_environment(job, EnvironmentRecord(
        key="0123456789abcdef", failed="setup could not reach pypi.org:443 (not on "
        "`network_allow`)", failed_before="issue-4: the same"))
    assert setup_lines(job) == [
        "- Setup: `pip install x`; environment not built: setup could not reach pypi.org:443 "
        "(not on `network_allow`) (key `0123456789ab`)",
        "- The last build of this environment failed, in job issue-4: the same"]
    record_environment(job, EnvironmentRecord(key="0123456789abcdef", failed_before="issue-4: x"))
    assert setup_lines(job)[1] == \
        "- The last build of this environment failed, in job issue-4: x; built now"


def test_reloading_a_changed_config_forgets_the_environment_key() -> None:
    """The key was made of the config read before: a changed `setup` must make its own."""
    job = make_job(status=JobStatus.PLANNING)
    open_gate(job, Gate.PLAN, reason="the plan is ready", now=T0)
    record_environment(job, EnvironmentRecord(key="0123456789abcdef", failed="setup failed"))
    reload_config(job, job.config)  # unchanged: the key stays
    assert environment_of(job) is not None
    open_gate(job, Gate.PLAN, reason="the plan is ready", now=T0)
    reload_config(job, job.config.model_copy(update={"network_allow": ["corp.example"]}))
    assert environment_of(job) is None
