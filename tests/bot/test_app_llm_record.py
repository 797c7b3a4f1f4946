"""The llm agent's record through the App (issue 41.7), by signed webhooks into the real app
against the fake GitHub, with the scripted model over HTTP: `run_checks` answers with each
validation command and its exit code (the failing one's output tail, the commands a failure left
unrun), and the change note on the job branch carries what the model said of each file, as
inert text (no live link or mention)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer, call
from jobs.kernel.model import BatchStatus
from tests.bot.conftest import REPO, open_world
from tests.kit.llm import ALPHA, llm_issue_text, serve_model
from tests.kit.local_e2e import VALIDATE, config_text, sample_files

AREA, PERIMETER = ALPHA
SECOND = "python -c pass"  # a second validation command: unrun after the first one fails
ZWJ = "\u200d"


def edit(path: str, old: str, new: str) -> object:
    return call("edit_file", path=path, old_text=old, new_text=new)


def tool_results(model: ScriptedServer) -> list[str]:
    """Every tool result the model was sent, in order (each request repeats the earlier ones)."""
    last = model.requests[-1].messages
    return [m["content"] for m in last if m["role"] == "tool"]


@pytest.mark.slow  # a server job: ~15 s
def test_run_checks_names_each_command_and_the_note_carries_each_files_summary(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer() as model:
        serve_model(monkeypatch, model, EDIT_FORMAT="tools", MAX_RETRIES="0")
        model.add(edit(AREA, "legacy.old_sum(2, 3)", "legacy.new_sum(2, 4)"),  # wrong: 6 != 5
                  call("run_checks"),
                  edit(AREA, "legacy.new_sum(2, 4)", "legacy.new_sum(2, 3)"),
                  edit(PERIMETER, "legacy.old_sum(4, 4, 4)", "legacy.new_sum(4, 4, 4)"),
                  call("run_checks"),
                  call("finish", summary=(
                      f"- `{AREA}` — calls new_sum(); see https://example.com/x @octo-org/admins #1\n"
                      f"- **{PERIMETER}**: calls new_sum() | keeps [the](https://e.example) "
                      "result")))
        files = sample_files(config=config_text(batches_per_milestone=1,
                                                validate=[VALIDATE, SECOND]))
        with open_world(tmp_path, redis_url, files=files) as world:
            number = world.gh.add_issue(REPO, "Use new_sum()", llm_issue_text(), user="maria")
            world.label_and_approve(number)
            job = world.job(number)
            batch = job.batch(1)
            assert batch.status is BatchStatus.COMPLETED, (job.status, job.gate, batch.attempts)
            note = world.gh.read_file(world.repo, job.note_path, ref=job.branch)
    results = tool_results(model)
    failed = next(r for r in results if r.startswith("checks failed"))
    assert failed.startswith(
        f"checks failed (validation_failed):\nRan: `{VALIDATE}` exited 1; not run after that "
        f"failure: `{SECOND}`.\nYour change applied and passed the guard, but validation failed: "
        f"`{VALIDATE}` exited 1. Output tail:\n```\n"), failed
    assert "AssertionError: 6 != 5" in failed
    passed = next(r for r in results if r.startswith("checks pass"))
    assert passed == ("checks pass: the guard, validation and targets are all fine (ran: "
                      f"`{VALIDATE}` exited 0; `{SECOND}` exited 0); call finish")

    assert batch.file_summaries == {
        AREA: "calls new_sum(); see https://example.com/x @octo-org/admins #1",
        PERIMETER: "calls new_sum() | keeps [the](https://e.example) result"}
    assert note is not None
    row = next(line for line in note.splitlines() if line.startswith("| 1 | 1 | completed |"))
    files = row.split(" | ")[3]
    assert files == (
        f"calc/alpha/area.py — calls new_sum(); see https:{ZWJ}//example.com/x "
        f"@{ZWJ}octo-org/admins #{ZWJ}1<br>calc/alpha/perimeter.py — calls new_sum() \\| "
        f"keeps \\[the\\](https:{ZWJ}//e.example) result"), row
