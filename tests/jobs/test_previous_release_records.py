"""A job record written by the previous release (the real `stepwise` command of commit
PREVIOUS_RELEASE, tests/kit/previous_release.py, run from its tree as the rolling upgrade test
runs it) loads in this one and the job finishes: the fields a feature's part of the record
replaced (base_moves' `base_merges`, `base_checked`, ...; CI's `ci_wait`, `ci_results` and each
attempt's `ci_checks`; environments' `environment`; bisect's batch fields `split`,
`split_from`, `split_kind`, `auto_size`) are read into that part (jobs/kernel/record_upgrades.py
`parts_from_fields`, a feature's `upgrade_batch`), and the change note still lists what the old
release recorded.

Real git repositories and real validation in local mode; nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.adapters.sandbox import bubblewrap_available
from jobs.features.base_moves.record import BaseMoves, moves
from jobs.features.bisect.record import BatchSplit, bisect_of
from jobs.features.ci.record import CiBatch, CiJob, ci, ci_batch, withdrawn_checks
from jobs.features.environments.record import EnvironmentRecord, environment_of
from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate, JobStatus
from tests.jobs.features.base_moves.kit import move_base
from tests.kit.local_e2e import (
    BROKEN_MODULE,
    NUMBER,
    assert_exit,
    build_sample,
    config_text,
    load_job,
    session,
    show,
    state_path,
    write_issue,
)
from tests.kit.previous_release import OLD_STEPWISE, previous_release_tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def previous_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's `bot/` and `jobs/`."""
    return previous_release_tree(tmp_path_factory.mktemp("previous-release"))


def old_stepwise(tree: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The previous release's `stepwise`, run from its own tree (first on sys.path)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200", "NO_COLOR": "1",
           "TERM": "dumb"}
    return subprocess.run([*OLD_STEPWISE, *map(str, args)], cwd=tree, env=env, text=True,
                          capture_output=True, check=False, timeout=300)


def test_a_record_of_the_previous_release_with_a_base_merge_loads_and_the_job_finishes(
        tmp_path: Path, previous_release: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(update_from_base="behind"))
    issue = write_issue(tmp_path / "issue.md")
    started = old_stepwise(previous_release, "run", "--repo", repo, "--issue", issue,
                           "--number", NUMBER)
    assert started.returncode == 3, started.stdout + started.stderr  # at the plan gate
    base = move_base(repo, {"README.md": "# calc\n\nUnrelated news.\n"})
    approved = old_stepwise(previous_release, "approve", "--repo", repo, "--number", NUMBER)
    assert approved.returncode == 3, approved.stdout + approved.stderr  # at milestone 1

    written = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert [m["base_sha"] for m in written["base_merges"]] == [base]  # the old release's field
    assert "base_moves" not in written.get("parts", {})

    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE
    assert isinstance(job.parts[BaseMoves.PART], BaseMoves)
    [merge] = moves(job).merges
    assert merge.base_sha == base and merge.by == "stepwise"
    assert [c.exit_code for c in merge.commands] == [0]
    assert moves(job).checked == f"{base}..{job.head_sha}"

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert [m.commit for m in moves(job).merges] == [merge.commit]
    saved = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert "base_merges" not in saved and "llm" not in saved  # written in this release's shape
    assert saved["parts"]["base_moves"]["merges"][0]["commit"] == merge.commit
    note = show(repo, job.branch, job.note_path)
    assert "## Base merges" in note and base[:7] in note


# Run in the previous release's tree: the job's CI record as that release wrote it (its own
# models and store), as a server job waiting for CI on its milestone head would have it.
OLD_CI_RECORD = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from jobs.adapters.store import FileStore
from jobs.composition import install
from jobs.kernel.records import CiCheck, CiResult, CiWait

install()
store = FileStore(Path(sys.argv[1]))
job = store.load(int(sys.argv[2]))
at, head, first = datetime.now(UTC), job.head_sha, job.batches[0]
red = CiCheck(name="tests", status="completed", conclusion="failure", url="https://ci.example/1")
job.ci_results = [CiResult(scope="milestone", number=1, sha=head, state="failed", at=at,
                           checks=[red], accepted=True)]
first.ci_results = [CiResult(scope="batch", number=1, sha=first.commit, state="passed", at=at)]
first.attempts[0].ci_checks = [red]
job.ci_wait = CiWait(sha=head, since=at, scope="milestone", number=1,
                     progress="waiting for CI: 0 of 1 checks done")
store.save(job)
"""


def test_a_record_of_the_previous_release_with_ci_results_loads_and_the_job_finishes(
        tmp_path: Path, previous_release: Path) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text())
    issue = write_issue(tmp_path / "issue.md")
    started = old_stepwise(previous_release, "run", "--repo", repo, "--issue", issue,
                           "--number", NUMBER)
    assert started.returncode == 3, started.stdout + started.stderr  # at the plan gate
    approved = old_stepwise(previous_release, "approve", "--repo", repo, "--number", NUMBER)
    assert approved.returncode == 3, approved.stdout + approved.stderr  # at milestone 1
    env = {**os.environ, "PYTHONPATH": str(previous_release)}
    wrote = subprocess.run([sys.executable, "-c", OLD_CI_RECORD, str(state_path(repo).parent),
                            str(NUMBER)], cwd=previous_release, env=env, text=True,
                           capture_output=True, check=False, timeout=120)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr

    written = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert written["ci_wait"]["scope"] == "milestone" and "ci" not in written.get("parts", {})
    head = written["head_sha"]

    job = load_job(repo)
    assert isinstance(job.parts[CiJob.PART], CiJob)
    assert isinstance(job.batch(1).parts[CiBatch.PART], CiBatch)
    wait = ci(job).wait
    assert wait is not None and wait.sha == head and wait.progress.startswith("waiting for CI")
    [result] = ci(job).results
    assert (result.state, result.accepted, result.sha) == ("failed", True, head)
    assert [r.state for r in ci_batch(job.batch(1)).results] == ["passed"]
    assert [c.name for c in withdrawn_checks(job.batch(1), 1)] == ["tests"]

    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)  # local mode: no CI to wait for now
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED and ci(job).wait is None
    saved = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert "ci_wait" not in saved and "ci_results" not in saved  # this release's shape
    assert saved["parts"]["ci"]["results"][0]["accepted"] is True
    batch_doc = json.loads((state_path(repo).parent / f"issue-{NUMBER}.batches" / "1.json")
                           .read_text(encoding="utf-8"))
    assert "ci_results" not in batch_doc and "ci_checks" not in batch_doc["attempts"][0]
    assert batch_doc["parts"]["ci"]["withdrawn"][0]["checks"][0]["name"] == "tests"
    note = show(repo, job.branch, job.note_path)
    assert "## The repository's CI" in note and "Accepted although CI did not pass" in note


SETUP = "python -c \"import pathlib; pathlib.Path('built').mkdir(); pathlib.Path('built/ok').touch()\""


@pytest.mark.skipif(not bubblewrap_available(), reason="needs bubblewrap (setup's environment)")
def test_a_record_of_the_previous_release_with_an_environment_and_a_split_loads_and_finishes(
        tmp_path: Path, previous_release: Path) -> None:
    """The old release built the job's environment (its field `environment`) and split the
    failing batch (its batches' `split`, `split_from`, `split_kind`): this one reads them into
    the environments' and bisect's parts of the record and finishes the job."""
    repo = build_sample(tmp_path / "repo", broken=True, config=config_text(setup=[SETUP]))
    issue = write_issue(tmp_path / "issue.md")
    started = old_stepwise(previous_release, "run", "--repo", repo, "--issue", issue,
                           "--number", NUMBER, "--yes")
    assert started.returncode == 4, started.stdout + started.stderr  # the culprit's failure gate

    written = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert written["environment"]["key"]  # the old release's field
    assert "environments" not in written.get("parts", {})
    batches = [json.loads(path.read_text(encoding="utf-8"))
               for path in state_path(repo).with_suffix(".batches").glob("*.json")]
    split = next(b for b in batches if b.get("split"))
    culprit = next(b for b in batches if b.get("split_from"))
    assert culprit["split_from"] == split["number"] and culprit["split_kind"] == "culprit"
    assert culprit["files"] == [BROKEN_MODULE]

    job = load_job(repo)
    built = environment_of(job)
    assert isinstance(job.parts[EnvironmentRecord.PART], EnvironmentRecord)
    assert built is not None and built.key == written["environment"]["key"]
    assert built.entries == written["environment"]["entries"]
    split_part = job.batch(split["number"]).parts[BatchSplit.PART]
    assert isinstance(split_part, BatchSplit) and split_part.split is not None
    assert split_part.split.set_aside == [BROKEN_MODULE] and split_part.split.finished
    aside = bisect_of(job.batch(culprit["number"]))
    assert (aside.split_from, aside.split_kind) == (split["number"], "culprit")
    assert job.gate is not None and job.gate.batch == culprit["number"]

    finish(repo)
    saved = json.loads(state_path(repo).read_text(encoding="utf-8"))
    assert "environment" not in saved  # written in this release's shape
    assert saved["parts"]["environments"]["key"] == built.key
    saved_batch = json.loads(state_path(repo).with_suffix(".batches").joinpath(
        f"{culprit['number']}.json").read_text(encoding="utf-8"))
    assert "split_from" not in saved_batch
    assert saved_batch["parts"]["bisect"] == {"split_from": split["number"],
                                              "split_kind": "culprit"}
    assert bisect_of(load_job(repo).batch(culprit["number"])).split_from == split["number"]
    note = show(repo, load_job(repo).branch, load_job(repo).note_path)
    assert "## Split batches" in note and BROKEN_MODULE in note


def finish(repo: Path) -> None:
    """Answer the job's gates as a maintainer would (skip the culprit, approve the rest) until
    it completes."""
    for _ in range(8):
        job = load_job(repo)
        if job.status is JobStatus.COMPLETED:
            return
        assert job.gate is not None, job.status
        verb = Verb.SKIP if job.gate.kind is Gate.FAILURE else Verb.APPROVE
        session(repo).verb(verb, reason="the culprit is fixed by hand" if verb is Verb.SKIP
                           else "")
    raise AssertionError(f"the job did not finish: {load_job(repo).status}")
