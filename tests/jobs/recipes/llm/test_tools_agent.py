"""The tool-using attempt end to end: the scripted model calls tools over real HTTP, the real
openai client carries them, and the engine guards, validates and commits the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bot.cli.main import app
from bot.demo.scripted_llm import Reply, ScriptedServer, call
from jobs.features.llm.statistics import llm_statistics
from jobs.kernel.model import BatchStatus
from tests.kit.llm import ALPHA, API_KEY, fixed, head_text, llm_issue, llm_session
from tests.kit.local_e2e import (
    Recorder,
    assert_exit,
    build_sample,
    changed_paths,
    config_text,
    load_job,
    sample_files,
    show,
)
from tests.kit.repos import make_repo

AREA, PERIMETER = ALPHA
SUMMARY = (f"{AREA}: calls legacy.new_sum() now\n"
           f"{PERIMETER}: calls legacy.new_sum() now")


def edit(path: str, old: str, new: str, reason: str = "") -> Reply:
    arguments: dict[str, Any] = {"path": path, "old_text": old, "new_text": new}
    if reason:
        arguments["reason"] = reason
    return call("edit_file", **arguments)


def good_edits() -> list[Reply]:
    return [edit(AREA, "legacy.old_sum(2, 3)", "legacy.new_sum(2, 3)", "old_sum is deprecated"),
            edit(PERIMETER, "legacy.old_sum(4, 4, 4)", "legacy.new_sum(4, 4, 4)",
                 "old_sum is deprecated")]


def tool_results(server: ScriptedServer, request: int) -> list[str]:
    """The tool results a request carried that the previous one did not (the newest)."""
    seen = len(server.requests[request - 1].messages) if request else 0
    return [m["content"] for m in server.requests[request].messages[seen:] if m["role"] == "tool"]


def result_of(server: ScriptedServer, request: int) -> str:
    [text] = tool_results(server, request)
    return text


def test_the_model_reads_searches_edits_checks_and_finishes(tmp_path: Path,
                                                            server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    server.add(call("list_files", path="calc"),
               call("outline", path="calc/legacy.py"),
               call("search", pattern=r"old_sum\(", path="calc"),
               call("read_file", path=AREA, start_line=5, end_line=7),
               good_edits()[0],
               edit(PERIMETER, "return legacy.old_sum(4, 4, 4 )", "return legacy.new_sum(4, 4, 4)"),
               good_edits()[1],
               call("run_checks"),
               call("finish", summary=SUMMARY))
    recorder = Recorder()
    session = llm_session(repo, server, recorder, edit_format="tools", restate_every=0)
    assert_exit(session.run(llm_issue(), yes=True), 0)

    listing = result_of(server, 1)
    assert listing.startswith("11 tracked file(s) under calc:")
    assert "calc/alpha/area.py" in listing and "calc/legacy.py" in listing
    outline = result_of(server, 2)  # a file outside the batch, read for its facts
    assert "def new_sum(*values):" in outline
    assert 'def old_sum(*values):  """Deprecated: use new_sum()."""' in outline
    found = result_of(server, 3)
    assert found.startswith("8 match(es) in 7 file(s):")  # the 6 callers, the def, a message
    assert "\ncalc/beta/score.py:7: return legacy.old_sum(10, 20)\n" in found
    assert result_of(server, 4) == (f"{AREA} (7 lines), lines 5–7:\n    5| \n    6| def area():\n"
                                    "    7|     return legacy.old_sum(2, 3)")
    assert result_of(server, 5).startswith(f"edited {AREA} at line 7")
    near = result_of(server, 6)
    assert near.startswith(f"error: old_text is not in {PERIMETER} as written. The closest "
                           "region is lines 7–7")
    assert "    7|     return legacy.old_sum(4, 4, 4)" in near
    assert ("First difference: old_text has `return legacy.old_sum(4, 4, 4 )` where line 7 is "
            "`    return legacy.old_sum(4, 4, 4)`") in near
    # Each validation command with its exit code (issue 41.7).
    assert result_of(server, 8) == ("checks pass: the guard, validation and targets are all "
                                    "fine (ran: `python -m unittest discover -s tests -q` exited "
                                    "0); call finish")

    job = load_job(repo)
    batch = job.batch(1)
    assert batch.status is BatchStatus.COMPLETED and batch.commit is not None
    assert changed_paths(repo, batch.commit) == sorted(ALPHA)
    for path in ALPHA:
        assert show(repo, batch.commit, path) + "\n" == fixed(head_text(repo, path))
    assert batch.file_summaries == {AREA: "calls legacy.new_sum() now",
                                    PERIMETER: "calls legacy.new_sum() now"}
    calls = batch.attempts[-1].llm_calls
    assert [c.outcome for c in calls] == ["tools"] * 5 + ["tool_error", "tools", "tools",
                                                          "validated"]
    uses = [use for c in calls for use in c.tools]
    assert [u.name for u in uses][:4] == ["list_files", "outline", "search", "read_file"]
    edits = [u for u in uses if u.name == "edit_file"]
    assert [(u.path, u.error, u.severity, u.reason) for u in edits] == [
        (AREA, "", "", "old_sum is deprecated"), (PERIMETER, "no_match", "soft", ""),
        (PERIMETER, "", "", "old_sum is deprecated")]
    first = server.requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == [
        "list_files", "outline", "search", "read_file", "edit_file", "write_file", "run_checks",
        "finish"]
    assert "legacy.old_sum(2, 3)" in first["messages"][1]["content"]  # the batch is shown
    assert "edit format tools" in batch.attempts[-1].edit_summary
    assert any("model turn 6: edit_file (no_match)" in text for _, text in recorder.seen)

    report = llm_statistics(job)
    assert "- committed files: 2; rounds per committed file: 4.5;" in report
    assert "| edit_file | 3 | 1/3 (33%) |" in report and "| read_file | 1 | 0/1 (0%) |" in report
    assert "| no_match | soft | 1 | 11% |" in report
    assert f"- batch 1, attempt 1: `{AREA}` — old_sum is deprecated" in report
    printed = CliRunner().invoke(app, ["llm-report", "--repo", str(repo)])
    assert printed.exit_code == 0, printed.output
    assert "Tool calls by tool" in printed.output and "no_match" in printed.output


def test_finish_with_failing_validation_is_fed_back_and_the_model_continues(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    server.add(edit(AREA, "legacy.old_sum(2, 3)", "legacy.new_sum(2, 4)", "wrong on purpose"),
               good_edits()[1],
               call("finish", summary="done"),
               edit(AREA, "legacy.new_sum(2, 4)", "legacy.new_sum(2, 3)", "the test wants 5"),
               call("finish", summary=SUMMARY))
    assert_exit(llm_session(repo, server, edit_format="tools").run(llm_issue(), yes=True), 0)
    refused = result_of(server, 3)
    assert refused.startswith("error: the batch is not done (validation_failed); Stepwise's "
                              "check said:")
    assert "exited 1" in refused and "AssertionError: 6 != 5" in refused
    assert "diff" not in refused.split("check said:")[1]  # reworded for a tool conversation
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert [c.outcome for c in job.batch(1).attempts[-1].llm_calls] == [
        "tools", "tools", "tools", "tools", "validated"]


def test_writes_outside_the_batch_and_refused_reads_end_the_attempt_after_three(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = make_repo(tmp_path / "repo", sample_files(config=config_text(max_failed_attempts=1)))
    server.add(call("write_file", path="calc/beta/score.py", content="x = 1\n"),
               call("read_file", path=".git/config"),
               call("read_file", path="not/there.py"),  # soft: does not count as refused
               call("read_file", path="../outside.txt"))
    session = llm_session(repo, server, edit_format="tools")
    session.run(llm_issue(), yes=True)
    assert result_of(server, 1).startswith(
        "error: `calc/beta/score.py` is not one of this batch's files (calc/alpha/area.py, "
        "calc/alpha/perimeter.py); you may read it but change only the batch's files")
    assert result_of(server, 2) == "error: `.git/config` is inside `.git`, which no tool reads"
    assert result_of(server, 3).startswith("error: `not/there.py` does not exist")
    job = load_job(repo)
    error = job.batch(1).attempts[-1].error
    assert error is not None and error.code == "llm_tool_errors"
    assert "3 hard tool errors (the last: read_file refused_path)" in error.message
    assert show(repo, "HEAD", "calc/beta/score.py") == head_text(repo, "calc/beta/score.py")[:-1]
    assert len(server.requests) == 4


def test_the_same_read_is_warned_from_the_third_time_and_ends_the_attempt_at_the_seventh(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = make_repo(tmp_path / "repo", sample_files(config=config_text(max_failed_attempts=1)))
    server.add([call("read_file", path="calc/legacy.py")] * 7)
    llm_session(repo, server, edit_format="tools").run(llm_issue(), yes=True)
    assert "warning: this is" not in result_of(server, 2)
    assert "warning: this is the 3rd time you asked for exactly this" in result_of(server, 3)
    assert "warning: this is the 6th time" in result_of(server, 6)
    error = load_job(repo).batch(1).attempts[-1].error
    assert error is not None and error.code == "llm_repeated_read"
    assert "the same read_file 7 times" in error.message


def test_a_server_without_function_calling_falls_back_to_search_replace(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")

    def refuse_tools(body: dict[str, Any]) -> Reply:
        assert "tools" in body
        return Reply("tools are not supported by this model", status=400)

    blocks = "".join(f"{path}\n<<<<<<< SEARCH\n    return legacy.old_sum({args})\n=======\n"
                     f"    return legacy.new_sum({args})\n>>>>>>> REPLACE\n\n"
                     for path, args in ((AREA, "2, 3"), (PERIMETER, "4, 4, 4")))
    server.add(refuse_tools, Reply(blocks + f"SUMMARY {AREA}: new_sum\n"))
    recorder = Recorder()
    assert_exit(llm_session(repo, server, recorder, edit_format="tools").run(
        llm_issue(), yes=True), 0)
    assert "tools" not in server.requests[1].body
    assert "<<<<<<< SEARCH" in server.requests[1].messages[0]["content"]
    assert any("refused function calling" in text for _, text in recorder.seen)
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert job.batch(1).file_summaries[AREA] == "new_sum"


def test_a_model_that_answers_without_calling_a_tool_falls_back_to_search_replace(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    blocks = "".join(f"{path}\n<<<<<<< SEARCH\n    return legacy.old_sum({args})\n=======\n"
                     f"    return legacy.new_sum({args})\n>>>>>>> REPLACE\n\n"
                     for path, args in ((AREA, "2, 3"), (PERIMETER, "4, 4, 4")))
    server.add(Reply("I would change old_sum to new_sum in both files."), Reply(blocks))
    recorder = Recorder()
    assert_exit(llm_session(repo, server, recorder, edit_format="tools").run(
        llm_issue(), yes=True), 0)
    assert "tools" in server.requests[0].body and "tools" not in server.requests[1].body
    assert any("answered without calling a tool" in text for _, text in recorder.seen)
    calls = load_job(repo).batch(1).attempts[-1].llm_calls
    assert [c.outcome for c in calls] == ["no_tool_call", "validated"]


def test_secrets_in_files_never_reach_the_model_through_a_tool_result(
        tmp_path: Path, server: ScriptedServer) -> None:
    files = dict(sample_files())
    token = "ghp_" + "a1B2c3D4" * 5
    files["README.md"] = f"# calc\n\nkey: {API_KEY}\ntoken: {token}\n"
    repo = make_repo(tmp_path / "repo", files)
    server.add(call("read_file", path="README.md"), call("search", pattern="key|token"),
               *good_edits(), call("finish", summary=SUMMARY))
    assert_exit(llm_session(repo, server, edit_format="tools").run(llm_issue(), yes=True), 0)
    assert "[redacted]" in result_of(server, 1) and "[redacted]" in result_of(server, 2)
    sent = json.dumps([r.body for r in server.requests])
    assert API_KEY not in sent and token not in sent


def test_long_conversations_are_restated_and_compacted_keeping_paths_and_identifiers(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    reads = [call("read_file", path="tests/test_calc.py", start_line=n) for n in range(1, 9)]
    server.add(*reads, *good_edits(), call("finish", summary=SUMMARY))
    session = llm_session(repo, server, edit_format="tools", restate_every=3,
                          compact_at_tokens=2000)
    assert_exit(session.run(llm_issue(), yes=True), 0)
    reminders = [m["content"] for m in server.requests[3].messages
                 if m["role"] == "user" and m["content"].startswith("# Reminder")]
    assert reminders and reminders[0].startswith("# Reminder (turn 4)\nGoal: Replace the "
                                                 "deprecated legacy.old_sum()")
    assert f"- {AREA}:7: return legacy.old_sum(2, 3)" in reminders[0]
    assert "- remove old_sum() itself" in reminders[0]  # the not-doing list
    compacted = [r for r in server.requests if len(r.messages) > 2
                 and str(r.messages[2]["content"]).startswith("# Summary of earlier turns")]
    assert compacted, "the conversation was never compacted"
    summary = compacted[0].messages[2]["content"]
    assert '- read_file {"path": "tests/test_calc.py", "start_line": 1}' in summary
    assert "  → tests/test_calc.py (" in summary
    kept = summary.split("verbatim): ")[-1]
    for name in ("calc.alpha.area", "test_area", "tests/test_calc.py"):
        assert name in kept
    assert compacted[0].messages[0]["role"] == "system"  # the rules are never compacted
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert "compacted" in job.batch(1).attempts[-1].edit_summary
