"""Where a resumed job says it resumed (issue 41.5): planning that an interruption cut off is
"planning", never "the final review"; a job between batches names the next batch."""

from __future__ import annotations

from pathlib import Path

from jobs.engine.start import resume_message
from tests.kit.local_e2e import assert_exit, build_sample, issue, load_job, session


def test_an_interrupted_plan_resumes_at_planning(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    assert_exit(session(repo).run(issue(), yes=False), 3)
    planned = load_job(repo)
    cut_off = planned.model_copy(update={"batches": [], "baseline_ok": None})
    assert resume_message(cut_off) == ("Resumed at planning (the plan and its baseline were not "
                                       "finished) after an interruption; no batch is committed "
                                       "yet.")
    before_baseline = planned.model_copy(update={"baseline_ok": None})
    assert resume_message(before_baseline).startswith("Resumed at planning")
    assert resume_message(planned) == ("Resumed at batch 1 of 3 after an interruption; no batch "
                                       "is committed yet.")
