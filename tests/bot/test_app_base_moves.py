"""The base branch moves under a job, as the App sees it: a signed push webhook for the default
branch, the real worker and git against the loopback fake GitHub (the remote is the truth)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer
from jobs.features.base_moves.parts import CONFLICT
from jobs.features.base_moves.record import moves
from jobs.kernel.gates import Verb, apply_verb
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.kit import github_git
from tests.kit.llm import good_reply, llm_issue_text, serve_model
from tests.kit.local_e2e import config_text, module_source, sample_files

AREA = "calc/alpha/area.py"


def world_with(tmp_path: Path, redis_url: str, policy: str) -> Iterator[World]:
    # notes: per_milestone, so the milestone's note (which tells the replays) is on the branch.
    files = sample_files(config=config_text(batches_per_milestone=1, update_from_base=policy,
                                            notes="per_milestone"))
    with open_world(tmp_path, redis_url, files=files) as opened:
        yield opened


@pytest.fixture
def conflicted(tmp_path: Path, redis_url: str) -> Iterator[World]:
    yield from world_with(tmp_path, redis_url, "conflicted")


@pytest.fixture
def behind(tmp_path: Path, redis_url: str) -> Iterator[World]:
    yield from world_with(tmp_path, redis_url, "behind")


def at_first_milestone(world: World) -> None:
    world.label_and_approve()
    assert world.job().gate.kind is Gate.MILESTONE


def move_base(world: World, files: dict[str, str | bytes | None]) -> str:
    """Someone pushes to the default branch; GitHub sends the push webhook."""
    sha = world.gh.push_files(REPO, "main", files, "base moves")
    answer = world.send("push", ref="refs/heads/main", sender="dev")
    assert answer.json()["status"] == "queued"
    world.work()
    job = world.job()
    assert moves(job).moved_at is not None  # at a gate: marked, looked at when it resumes
    return sha


def approve(world: World) -> None:
    pull = world.gh.pull_for(world.repo, world.job().branch)
    assert pull is not None
    world.comment("/stepwise approve", by="maria", on=pull.number)
    world.work()


def merges_on_branch(world: World, branch: str) -> list[str]:
    return [c.sha for c in world.gh.commits(world.repo, branch)
            if "Stepwise-Base-Merge:" in c.message]


def test_conflicted_leaves_an_unrelated_base_commit_alone(conflicted: World) -> None:
    world = conflicted
    at_first_milestone(world)
    head = world.job().head_sha
    move_base(world, {"README.md": "# calc\n\nUnrelated news.\n"})
    approve(world)  # milestone 2: batch 2 on top of the old base, no merge
    job = world.job()
    assert moves(job).merges == [] and merges_on_branch(world, job.branch) == []
    assert job.head_sha != head and moves(job).moved_at is None
    assert job.gate is not None and job.gate.kind is Gate.MILESTONE


def test_behind_pushes_a_validated_merge_commit_with_its_trailers(behind: World) -> None:
    world = behind
    at_first_milestone(world)
    head = world.job().head_sha
    base = move_base(world, {"README.md": "# calc\n\nUnrelated news.\n"})
    approve(world)
    job = world.job()
    [merge] = moves(job).merges
    assert merge.base_sha == base and [c.exit_code for c in merge.commands] == [0]
    assert merges_on_branch(world, job.branch) == [merge.commit]
    commit = next(c for c in world.gh.commits(world.repo, job.branch) if c.sha == merge.commit)
    assert commit.parents == (head, base)
    assert commit.subject == f"stepwise(#1): merge main ({base[:7]})"
    assert f"Stepwise-Job: {job.id}\nStepwise-Base-Merge: {base}" in commit.message
    assert world.gh.read_file(world.repo, "README.md", ref=job.branch) == \
        "# calc\n\nUnrelated news.\n"
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and "merged 1 time(s)" in pull.body  # the card lists it


def test_a_conflict_in_a_replace_batch_is_replayed_and_pushed(conflicted: World) -> None:
    world = conflicted
    at_first_milestone(world)
    job = world.job()
    assert AREA in job.batch(1).files
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    base = move_base(world, {AREA: moved})
    approve(world)
    job = world.job()
    [merge] = moves(job).merges
    assert [r.batch for r in merge.replayed] == [1] and merge.base_sha == base
    merged = world.gh.read_file(world.repo, AREA, ref=job.branch)
    assert merged is not None and "# width plus height" in merged
    assert "legacy.new_sum(2, 3)" in merged and "<<<<<<<" not in merged
    assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.MILESTONE
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    assert note is not None and "replayed batch 1" in note


def test_an_active_job_steps_when_the_base_moves_and_merges_it(behind: World) -> None:
    world = behind
    at_first_milestone(world)
    job = world.job()
    apply_verb(job, Verb.APPROVE)  # running, with no step queued (as if between two steps)
    world.ctx.store.save(job)
    assert world.queued() == 0
    base = world.gh.push_files(REPO, "main", {"README.md": "# calc\n\nNews.\n"}, "base moves")
    world.send("push", ref="refs/heads/main", sender="dev")
    world.work()  # the delivery queues the job's next step, which merges the base
    job = world.job()
    assert [m.base_sha for m in moves(job).merges] == [base]
    assert merges_on_branch(world, job.branch) == [moves(job).merges[0].commit]


def test_an_llm_batch_conflict_waits_at_the_conflict_gate_for_a_maintainers_merge(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer() as model:
        serve_model(monkeypatch, model, EDIT_FORMAT="diff")
        files = sample_files(config=config_text(batch_size=1, batches_per_milestone=1))
        with open_world(tmp_path, redis_url, files=files) as world:
            bare = world.repo.path
            model.add(good_reply(bare, [AREA]), good_reply(bare, ["calc/alpha/perimeter.py"]))
            number = world.gh.add_issue(REPO, "Use new_sum()", llm_issue_text(), user="maria")
            world.label_and_approve(number)
            job = world.job(number)
            assert job.gate.kind is Gate.MILESTONE and job.batch(1).files == [AREA]
            moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
            base = world.gh.push_files(REPO, "main", {AREA: moved}, "base moves")
            world.send("push", ref="refs/heads/main", sender="dev")
            pull = world.gh.pull_for(world.repo, job.branch)
            assert pull is not None
            world.comment("/stepwise approve", by="maria", on=pull.number)
            world.work()
            job = world.job(number)
            assert job.gate.kind == CONFLICT and AREA in job.gate.reason
            assert "git merge origin/main" in job.gate.reason
            assert any("Waiting at gate `conflict`" in b for b in world.bodies(pull.number))

            # A maintainer merges the base into the branch, resolving the conflict, and pushes.
            head = job.head_sha
            resolved = moved.replace("legacy.old_sum(", "legacy.new_sum(")
            fixed_tip = world.gh.push_files(REPO, job.branch, {AREA: resolved}, "resolve")
            merge = github_git.git(bare, "commit-tree", f"{fixed_tip}^{{tree}}", "-p", head,
                                   "-p", base, "-m", "Merge main").decode().strip()
            github_git.git(bare, "update-ref", f"refs/heads/{job.branch}", merge, fixed_tip)
            world.send("push", ref=f"refs/heads/{job.branch}", sender="maria")
            world.comment("/stepwise approve", by="maria", on=pull.number)
            world.work()
            job = world.job(number)
            assert [(m.base_sha, m.commit, m.by) for m in moves(job).merges] == \
                [(base, merge, "human")]
            assert job.status is JobStatus.COMPLETED and job.batch(2).commit is not None
            assert world.gh.read_file(world.repo, AREA, ref=job.branch) == resolved
