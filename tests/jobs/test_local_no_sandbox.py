"""Without bubblewrap (issue 41.4): the plan, the card and the change note say "Sandbox: none"
and why, through a real job whose commands ran unsandboxed."""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.sandbox import PlainSandbox
from jobs.local import LocalSession
from jobs.ports import Publication
from tests.kit.local_e2e import NUMBER, Recorder, assert_exit, build_sample, issue, load_job, show

SAID = ("- Sandbox: none — bubblewrap is not available here, so setup and validation run "
        "unsandboxed (a scrubbed environment and timeouts only); install bubblewrap (Debian "
        "`bubblewrap`) to isolate them")


def test_plan_card_and_note_say_sandbox_none(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    sink = Recorder()
    session = LocalSession(repo, NUMBER, sink=sink, sandbox=PlainSandbox())
    assert_exit(session.run(issue(), yes=True), 0)
    plan = sink.texts(Publication.PLAN)[-1]
    assert SAID in plan.splitlines()
    card = sink.texts(Publication.PROGRESS)[-1]
    assert SAID in card.splitlines()
    job = load_job(repo)
    assert SAID in show(repo, job.branch, job.note_path).splitlines()


def test_a_sandboxed_job_says_nothing_of_it(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    sink = Recorder()
    assert_exit(LocalSession(repo, NUMBER, sink=sink).run(issue(), yes=False), 3)
    assert "Sandbox: none" not in sink.texts(Publication.PLAN)[-1]
