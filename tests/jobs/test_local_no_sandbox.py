"""What the commands ran in (issue 41.4): without bubblewrap the plan, the card and the change
note say "Sandbox: none" and why; with it, what the sandbox is. Through real jobs."""

from __future__ import annotations

from pathlib import Path

from jobs.adapters.sandbox import BubblewrapSandbox, PlainSandbox
from jobs.local import LocalSession
from jobs.ports import Publication
from tests.jobs.adapters.sandbox_kit import needs_bwrap
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


SANDBOXED = ("- Sandbox: bubblewrap — the machine read-only, the worktree writable at "
             "`/tmp/stepwise/repo`, a private `/tmp`, `HOME` and process space, `.git` and "
             "Stepwise's state hidden, no network but Stepwise's egress proxy where `network` "
             "allows it; the tools and `env` paths outside that view are shown read-only")


@needs_bwrap
def test_a_sandboxed_job_says_what_the_sandbox_is(tmp_path: Path) -> None:
    repo = build_sample(tmp_path / "repo")
    sink = Recorder()
    assert_exit(LocalSession(repo, NUMBER, sink=sink, sandbox=BubblewrapSandbox()).run(
        issue(), yes=True), 0)
    plan = sink.texts(Publication.PLAN)[-1]
    assert "Sandbox: none" not in plan
    assert SANDBOXED in plan.splitlines()
    assert SANDBOXED in sink.texts(Publication.PROGRESS)[-1].splitlines()
    job = load_job(repo)
    assert SANDBOXED in show(repo, job.branch, job.note_path).splitlines()
    assert "the sandbox hides `.git`" not in show(repo, job.branch, job.note_path)
