"""Split batches by CI (`ci.wait: per_batch`), end to end through the App: signed webhooks, a
real Redis and RQ worker, the real githubkit client against the loopback fake GitHub, real
local validation. Every module passes the local tests; the repository's CI (the CI player)
fails on every commit in which one planted file is edited. A multi-file batch whose commit
turns red is split: the files the failing check's annotations name are left out of the first
candidate, each candidate passes local validation before it is pushed for CI, and what
passes is committed as the batch while the planted file waits alone at its `failure` gate.
Without annotations, the batch is bisected by CI the same way a locally failing batch is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jobs.features.bisect.record import bisect_of
from jobs.features.ci.record import AWAITING_CI
from jobs.features.ci.record import ci as ci_part
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.bot.ci_world import approved, player
from tests.bot.conftest import World, open_world
from tests.kit.github_ci import CiPlayer
from tests.kit.local_e2e import CI_WORKFLOW, MODULES, config_text, sample_files

pytestmark = pytest.mark.slow

# Batches keep to one directory: batch 1 holds calc/alpha's two modules; one milestone.
CONFIG = config_text(ci={"wait": "per_batch"}, batch_size=3, batches_per_milestone=10)


@pytest.fixture
def split_ci_world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    files = {**sample_files(config=CONFIG), **CI_WORKFLOW}
    with open_world(tmp_path, redis_url, files=files, ci_poll_s=30,
                    split_batches=True) as opened:
        yield opened


@dataclass
class PlantedCi:
    """A CI that fails `tests` on every commit whose tree has `planted` edited (new_sum)."""

    world: World
    ci: CiPlayer
    planted: str
    annotate: bool
    runs: list[tuple[frozenset[str], str]] = field(default_factory=list)  # (edited, verdict)

    def edited(self, sha: str) -> frozenset[str]:
        return frozenset(path for path in MODULES if "new_sum(" in (
            self.world.gh.read_file(self.world.repo, path, ref=sha) or ""))

    def play(self, limit: int = 20) -> None:
        """Answer every commit the job waits on, until it stops waiting for CI."""
        for _ in range(limit):
            job = self.world.job()
            if ci_part(job).wait is None:
                return
            sha = ci_part(job).wait.sha
            edited = self.edited(sha)
            if self.planted in edited:
                notes = [(self.planted, 5, "AssertionError: total is wrong")] \
                    if self.annotate else []
                self.ci.report(sha, "tests", "failure", annotations=notes)
                self.runs.append((edited, "failure"))
            else:
                self.ci.report(sha, "tests", "success")
                self.runs.append((edited, "success"))
            self.world.work()
        job = self.world.job()
        raise AssertionError(f"still waiting for CI after {limit} runs: {self.runs} "
                             f"{[(e.kind, e.message) for e in job.events[-8:]]}")


def start(world: World, *, annotate: bool) -> PlantedCi:
    job = approved(world)
    first = job.batch(1).files
    assert len(first) >= 2 and job.batch(1).status == AWAITING_CI
    planted = first[1]
    ci = PlantedCi(world, player(world), planted, annotate)
    ci.play()
    return ci


def assert_split_and_culprit_alone(world: World, ci: PlantedCi) -> None:
    job = world.job()
    planted = ci.planted
    assert job.status is JobStatus.AWAITING_HUMAN, (job.status, ci.runs)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    culprit = job.batch(job.gate.batch or 0)
    assert culprit.files == [planted] and bisect_of(culprit).split_from == 1
    assert "set aside from batch 1" in job.gate.reason and "not retried" in job.gate.reason
    assert "fails CI alone" in job.gate.reason  # CI judged it: not "fails validation alone"
    assert job.gate.report is not None and job.gate.report.code == "ci_failed"
    first, second = job.batch(1), job.batch(2)
    assert first.status is BatchStatus.COMPLETED and planted not in first.files
    state = bisect_of(first).split
    assert state is not None and len(first.files) == len(state.files) - 1
    assert second.status is BatchStatus.COMPLETED
    assert state.by_ci and state.finished
    # The branch: batch 1's commit names the file set aside; no candidate stayed on it.
    commits = world.gh.commits(world.repo, job.branch)
    ones = [c for c in commits if "Stepwise-Batch: 1" in c.message]
    assert len(ones) == 1 and f"Stepwise-Split: {planted}" in ones[0].message
    assert not any("CI candidate" in c.message for c in commits)
    assert planted not in ci.edited(job.head_sha)
    # Every candidate CI judged passed local validation first (the events say so).
    locally = [e for e in job.events if e.kind == "split" and "passed locally" in e.message]
    assert len(locally) >= 2
    # The card says the batch was split after CI failed, and where the file went.
    pull = world.gh.pull_for(world.repo, job.branch)
    size = len(state.files)
    assert pull is not None and f"failed in CI with all {size} files" in pull.body
    assert f"set aside as batch {culprit.number}" in pull.body


def test_annotations_isolate_the_named_file_first(split_ci_world: World) -> None:
    world = split_ci_world
    ci = start(world, annotate=True)
    batch_one = bisect_of(world.job().batch(1)).split
    assert batch_one is not None and batch_one.named == [ci.planted]
    first = frozenset(batch_one.files)
    rest = first - {ci.planted}
    # red whole batch, then the batch without the named file (green), the named file alone
    # (red), the passing files as batch 1 (green), the other batches (green), the culprit
    # alone (red)
    assert [edited & first for edited, _ in ci.runs[:4]] == [
        first, rest, frozenset([ci.planted]), rest]
    assert [verdict for _, verdict in ci.runs[:4]] == ["failure", "success", "failure", "success"]
    assert all(verdict == "success" for _, verdict in ci.runs[4:-1])
    assert ci.runs[-1] == (frozenset(MODULES), "failure")  # the culprit, last, on the rest
    assert_split_and_culprit_alone(world, ci)


def test_without_annotations_the_batch_is_bisected_by_ci(split_ci_world: World) -> None:
    world = split_ci_world
    ci = start(world, annotate=False)
    state = bisect_of(world.job().batch(1)).split
    assert state is not None and state.named == []
    first = frozenset(state.files)
    judged = [edited & first for edited, _ in ci.runs]
    assert judged[0] == first
    # halves, each judged by CI after local validation, until the planted file is alone
    assert frozenset([ci.planted]) in judged and frozenset(state.files[:1]) in judged
    assert all(verdict == "failure" for edited, verdict in ci.runs if ci.planted in edited)
    planned = len([b for b in world.job().batches if bisect_of(b).split_from is None])
    # the red batch, at most 2·log2(k) + 1 candidates for k <= 3, each planned batch's
    # commit, the culprit alone
    assert len(ci.runs) <= 1 + (2 * 2 + 1) + planned + 1
    assert_split_and_culprit_alone(world, ci)
