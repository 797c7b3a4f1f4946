"""An `llm` batch that keeps failing is split (issue 30), on a real repository with the real
openai client and the scripted model server: the model's every answer fixes
`calc/alpha/area.py` and breaks `calc/alpha/perimeter.py` (a wrong argument list, which the
unittest suite catches). After the batch's `max_failed_attempts` attempts, halves of the
last attempt's edit are validated: the good file is committed as batch 1, the bad one goes
to a batch of its own, where the model gets its own attempts (a model may do better on a file
alone) before the `failure` gate opens for it alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.features.bisect.record import bisect_of
from jobs.kernel.model import BatchStatus, Gate
from tests.kit.llm import ALPHA, answer, fixed, head_text, llm_issue, llm_session, unified
from tests.kit.local_e2e import assert_exit, branch_commits, build_sample, load_job, show

pytestmark = pytest.mark.slow  # about 15 s: two batches of model attempts and a split

AREA, PERIMETER = ALPHA


def broken(text: str) -> str:
    """perimeter() on three sides summed as two: 8 where the test expects 12."""
    return text.replace("legacy.old_sum(4, 4, 4)", "legacy.new_sum(4, 4)")


def scripted_model(repo: Path) -> Any:
    """Each answer edits the files the prompt names (the batch's): area right, perimeter
    wrong."""
    def reply(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content") or "") for m in body["messages"]
                           if m.get("role") == "user")
        diff = ""
        if AREA in prompt:
            diff += unified(AREA, head_text(repo, AREA), fixed(head_text(repo, AREA)))
        if PERIMETER in prompt:
            diff += unified(PERIMETER, head_text(repo, PERIMETER),
                            broken(head_text(repo, PERIMETER)))
        return Reply(answer(diff))
    return reply


def test_an_llm_batch_is_split_after_its_attempts(tmp_path: Path,
                                                  server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    server.add([scripted_model(repo)] * 40)
    outcome = llm_session(repo, server).run(llm_issue(), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)

    first, alone = job.batch(1), job.batch(2)
    # The model's attempts came first: the split only after max_failed_attempts of them.
    failed = [a for a in first.attempts if a.outcome != "committed"]
    assert len(failed) == job.config.max_failed_attempts
    assert all(a.error is not None and a.error.code == "validation_failed" for a in failed)
    # Then the split: the good file committed as batch 1, with the trailer naming the other.
    assert first.status is BatchStatus.COMPLETED and first.files == [AREA]
    state = bisect_of(first).split
    assert state is not None and state.finished and not state.gave_up
    commits = [c for c in branch_commits(repo, job) if "Stepwise-Batch" in c.trailers]
    assert commits[0].trailers["Stepwise-Batch"] == "1"
    assert commits[0].trailers["Stepwise-Split"] == PERIMETER
    assert show(repo, job.head_sha, AREA) + "\n" == fixed(head_text(repo, AREA))
    assert "old_sum(4, 4, 4)" in show(repo, job.head_sha, PERIMETER)  # not committed
    # The culprit alone: its own model attempts, then its own gate.
    assert alone.files == [PERIMETER] and bisect_of(alone).split_from == 1
    assert bisect_of(alone).split_kind == "culprit"
    assert len(alone.attempts) == job.config.max_failed_attempts
    assert job.gate is not None and job.gate.kind is Gate.FAILURE and job.gate.batch == 2
    assert job.gate.report is not None and "perimeter" in str(job.gate.report.evidence)
