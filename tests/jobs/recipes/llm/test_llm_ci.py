"""An llm batch withdrawn by the repository's CI (`ci.wait: per_batch`): the next attempt's
request tells the model which checks failed and what their annotations and logs said."""

from __future__ import annotations

from pathlib import Path

from bot.demo.scripted_llm import ScriptedServer
from jobs.features.ci.record import AWAITING_CI
from jobs.notes.annotations import Annotation
from jobs.ports import CiFailure
from tests.jobs.features.ci.ci_kit import rig
from tests.kit.llm import ALPHA, good_reply, llm_issue, settings


def test_the_next_attempt_is_told_why_ci_withdrew_the_last(tmp_path: Path,
                                                           server: ScriptedServer) -> None:
    ci_rig = rig(tmp_path, ci={"wait": "per_batch", "checks": ["tests"]}, task=llm_issue(),
                 llm=settings(server))
    server.add(good_reply(ci_rig.repo))
    ci_rig.run(yes=True)
    candidate = ci_rig.waiting_sha()
    ci_rig.forge.failure_details["tests"] = CiFailure(
        "tests", "failure", "https://ci.example/runs/3",
        annotations=(Annotation(ALPHA[0], 5, "TypeError: new_sum() got 3 arguments"),),
        log_tail="FAILED tests/test_calc.py::test_area - TypeError")
    ci_rig.forge.report_check(candidate, "tests", conclusion="failure")
    server.add(good_reply(ci_rig.repo))
    ci_rig.run()
    job = ci_rig.job
    assert len(job.batch(1).attempts) == 2 and job.batch(1).status == AWAITING_CI
    told = "\n".join(str(m["content"]) for m in server.requests[-1].messages)
    assert "the repository's CI failed on the commit" in told and "`tests`" in told
    assert f"{ALPHA[0]}:5: TypeError: new_sum() got 3 arguments" in told
    assert "FAILED tests/test_calc.py::test_area - TypeError" in told
