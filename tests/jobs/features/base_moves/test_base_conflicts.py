"""When the base branch conflicts with a local job's batch: a replace batch replayed on the
base version, a command batch's codemod replayed on the conflicting files only, a replay the
diff guard refuses (nothing pushed, the failure gate), and an LLM batch's conflict holding the
`conflict` gate until a human merges.

Real temporary repositories and real validation (the sample's unittest suite in the sandbox);
the base branch is the user's checkout branch `main`, moved by committing on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer
from jobs.adapters.workspace import Repository
from jobs.features.base_moves.parts import CONFLICT
from jobs.features.base_moves.record import moves
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from tests.jobs.features.base_moves.kit import AREA, at_milestone, move_base
from tests.kit.llm import good_reply, llm_issue, llm_session
from tests.kit.local_e2e import (
    Recorder,
    assert_exit,
    branch_head,
    build_sample,
    config_text,
    issue,
    load_job,
    module_source,
    run_tests_at,
    session,
    show,
)
from tests.kit.repos import commit_all, git, write_files


def test_a_conflict_in_a_replace_batch_is_replayed_on_the_base_version(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    at_milestone(repo)
    job = load_job(repo)
    owner = next(b for b in job.batches if AREA in b.files)
    assert owner.status is BatchStatus.COMPLETED
    # The line next to the batch's edit changes on the base: a textual conflict.
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    base = move_base(repo, {AREA: moved})
    conflicts = git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages",
                    job.head_sha, base, check=False).splitlines()[1:]
    assert conflicts == [AREA]  # a plain merge would conflict
    recorder = Recorder()
    assert_exit(session(repo, sink=recorder).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = moves(job).merges
    [replayed] = merge.replayed
    assert replayed.batch == owner.number and replayed.files == [AREA]
    assert AREA in replayed.reason
    merged = show(repo, merge.commit, AREA)
    assert "# width plus height" in merged and "legacy.new_sum(2, 3)" in merged
    assert "<<<<<<<" not in merged and "old_sum" not in merged
    assert [c.exit_code for c in merge.commands] == [0]
    assert job.status is JobStatus.COMPLETED and job.final_review is not None
    assert job.final_review.ok
    assert Repository(repo).is_ancestor(base, job.head_sha)
    note = show(repo, job.branch, job.note_path)
    assert f"replayed batch {owner.number}" in note
    done = run_tests_at(repo, job.branch, tmp_path / "check")
    assert done.returncode == 0, done.stderr


CODEMOD = '''import sys
from pathlib import Path

for name in sys.argv[1:]:
    path = Path(name)
    path.write_text(path.read_text().replace("old_sum(", "new_sum("))
'''


def test_a_conflict_in_a_command_batch_replays_the_codemod_on_those_files_only(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    write_files(repo, {"tools/codemod.py": CODEMOD})
    commit_all(repo, "add the codemod")
    task = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    local = session(repo)
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1
    job = load_job(repo)
    owner = next(b for b in job.batches if AREA in b.files)
    assert owner.status is BatchStatus.COMPLETED and len(owner.files) == 2
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    move_base(repo, {AREA: moved})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 0)
    job = load_job(repo)
    [merge] = moves(job).merges
    [replayed] = merge.replayed
    assert replayed.batch == owner.number and replayed.files == [AREA]
    [ran] = replayed.commands
    assert ran.argv == ["python", "tools/codemod.py", AREA] and ran.exit_code == 0
    merged = show(repo, merge.commit, AREA)
    assert "# width plus height" in merged and "legacy.new_sum(2, 3)" in merged
    note = show(repo, job.branch, job.note_path)
    assert f"replay of batch {owner.number}: `python tools/codemod.py {AREA}` → exit 0" in note


def test_a_replay_the_guard_refuses_pushes_nothing_and_stops_at_the_failure_gate(
        tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    # On the base's new version only, the codemod also edits the tests: the guard refuses that.
    sneaky = CODEMOD + ('''\nif "width" in Path(sys.argv[1]).read_text():\n'''
                        '''    Path("tests/test_calc.py").write_text("# gone\\n")\n''')
    write_files(repo, {"tools/codemod.py": sneaky})
    commit_all(repo, "add the codemod")
    task = issue(recipe="command", replace=None, run="python tools/codemod.py {files}")
    local = session(repo)
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)
    head = load_job(repo).head_sha
    move_base(repo, {AREA: module_source(AREA).replace("def area():", "def area():  # width")})
    assert_exit(session(repo).verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    assert job.gate.report is not None and job.gate.report.code == "base_merge_failed"
    assert "diff guard" in job.gate.report.message
    assert "tests/test_calc.py" in job.gate.report.message
    assert branch_head(repo, job.branch) == head and moves(job).merges == []


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


def test_an_llm_batch_conflict_opens_the_conflict_gate_until_a_human_merges(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(batch_size=1,
                                                              batches_per_milestone=1))
    server.add(good_reply(repo, [AREA]), good_reply(repo, ["calc/alpha/perimeter.py"]))
    recorder = Recorder()
    local = llm_session(repo, server, recorder)
    task = llm_issue()
    assert_exit(local.run(task, yes=False), 3)
    assert_exit(local.verb(Verb.APPROVE)[1], 3)  # milestone 1: batch 1 (area.py) committed
    job = load_job(repo)
    assert job.batch(1).files == [AREA] and job.batch(1).status is BatchStatus.COMPLETED
    moved = module_source(AREA).replace("def area():", "def area():  # width plus height")
    base = move_base(repo, {AREA: moved})

    outcome = local.verb(Verb.APPROVE)[1]
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == CONFLICT
    assert AREA in job.gate.reason and "`llm` batch" in job.gate.reason
    assert "git merge main" in job.gate.reason
    assert moves(job).conflict is not None and moves(job).conflict.files == [AREA]
    head = job.head_sha
    assert branch_head(repo, job.branch) == head  # nothing merged by Stepwise
    # Approved before anyone merged: the gate opens again and says why.
    assert_exit(local.verb(Verb.APPROVE)[1], 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == CONFLICT
    assert "does not hold the merge yet" in job.gate.reason

    # A maintainer merges on the branch and resolves the conflict, then approves.
    git(repo, "switch", "-q", job.branch)
    git(repo, "merge", "-q", "main", "-m", "merge main", check=False)
    resolved = moved.replace("legacy.old_sum(", "legacy.new_sum(")
    (repo / AREA).write_text(resolved)
    commit_all(repo, "merge main into the job branch")
    human = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")

    outcome = local.verb(Verb.APPROVE)[1]
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert job.status is JobStatus.COMPLETED
    assert [(m.base_sha, m.commit, m.by) for m in moves(job).merges] == [(base, human, "human")]
    # The maintainer's resolution is a person's commit on the branch: listed and counted too.
    assert [(c.sha, c.files) for c in job.human_commits] == [(human, [AREA])]
    assert moves(job).conflict is None
    assert all(g.kind is not Gate.HUMAN_COMMIT for g in [job.gate] if g)
    assert not any(e.message.startswith("human_commit") for e in job.events)
    assert job.batch(2).status is BatchStatus.COMPLETED
    assert show(repo, job.branch, AREA) + "\n" == resolved
