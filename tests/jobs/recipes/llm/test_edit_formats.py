"""The text edit formats end to end (search/replace blocks, whole files) and the repository's
`llm:` block choosing one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.basics.errors import StepwiseError
from jobs.features.llm.usage import usage
from jobs.inputs.config import load_config as parse_config
from jobs.notes.progress import render_plan
from jobs.recipes.llm.formats import search_replace_blocks, unified, whole_files
from tests.kit.llm import ALPHA, fixed, head_text, llm_issue, llm_session
from tests.kit.local_e2e import assert_exit, build_sample, config_text, load_job, show

AREA, PERIMETER = ALPHA


def block(path: str, search: str, replace: str) -> str:
    return f"{path}\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n\n"


def assert_fixed(repo: Path) -> None:
    job = load_job(repo)
    commit = job.batch(1).commit
    assert commit is not None
    for path in ALPHA:
        assert show(repo, commit, path) + "\n" == fixed(head_text(repo, path))


def test_search_replace_from_the_repository_config_is_applied_leniently_with_feedback(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo", config=config_text(
        llm={"edit_format": "search_replace"}))
    near_miss = block(AREA, "    return legacy.old_sum(2, 4)", "    return legacy.new_sum(2, 3)")
    loose = (block(AREA, "return   legacy.old_sum(2, 3)  ", "    return legacy.new_sum(2, 3)")
             + block(PERIMETER, "    return legacy.old_sum(4, 4, 4)",
                     "    return legacy.new_sum(4, 4, 4)")
             + f"SUMMARY {AREA}: uses new_sum\nSUMMARY {PERIMETER}: uses new_sum\n")
    server.add(Reply(near_miss), Reply(loose))
    session = llm_session(repo, server)  # the settings say diff: the repository's block wins
    assert_exit(session.run(llm_issue(), yes=True), 0)
    system = server.requests[0].messages[0]["content"]
    assert "<<<<<<< SEARCH" in system and "```diff" not in system
    feedback = server.requests[1].messages[-1]["content"]
    assert feedback.startswith(f"Block 1 ({AREA}): old_text is not in {AREA} as written. The "
                               "closest region is lines 7–7")
    assert "First difference: old_text has `    return legacy.old_sum(2, 4)` where line 7 is " \
           "`    return legacy.old_sum(2, 3)`" in feedback
    assert_fixed(repo)
    job = load_job(repo)
    assert [c.outcome for c in job.batch(1).attempts[-1].llm_calls] == ["no_match", "validated"]
    assert job.batch(1).file_summaries == {AREA: "uses new_sum", PERIMETER: "uses new_sum"}
    assert "(edit format search_replace)" in job.batch(1).attempts[-1].edit_summary
    assert usage(job).edit_format == "search_replace"  # as planned, and the plan says so
    assert "- Model edits: `search_replace`" in render_plan(job)


def test_whole_files_are_written_and_a_path_outside_the_request_is_fed_back(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    whole = "".join(f"{path}\n```python\n{fixed(head_text(repo, path))}```\n\n" for path in ALPHA)
    outside = f"calc/beta/score.py\n```\n{fixed(head_text(repo, 'calc/beta/score.py'))}```\n"
    server.add(Reply(outside), Reply(whole))
    assert_exit(llm_session(repo, server, edit_format="whole").run(llm_issue(), yes=True), 0)
    assert "the whole new\nfile in a fenced block" in server.requests[0].messages[0]["content"]
    assert server.requests[1].messages[-1]["content"].startswith(
        "Edit 1 names `calc/beta/score.py`, which is not one of this request's files")
    assert_fixed(repo)


def test_parsing_blocks_and_whole_files() -> None:
    answer = ("Here:\n\n**src/a.py**\n```\n<<<<<<< SEARCH\nold()\n=======\nnew()\n"
              ">>>>>>> REPLACE\n```\n`src/b.py`:\n<<<<<<< SEARCH\n=======\nadded\n"
              ">>>>>>> REPLACE\n")
    assert search_replace_blocks(answer) == [("src/a.py", "old()", "new()"),
                                             ("src/b.py", "", "added")]
    files = "src/a.py\n```py\nx = 1\n```\n```js src/b.js\nlet y;\n```\n"
    assert whole_files(files) == [("src/a.py", "x = 1\n"), ("src/b.js", "let y;\n")]
    assert unified("a.txt", "one\ntwo", "one\nthree") == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n\\ No newline at end of file\n"
        "+three\n\\ No newline at end of file\n")


def test_the_llm_block_is_checked() -> None:
    with pytest.raises(StepwiseError) as raised:
        parse_config("llm:\n  format: whole\n")
    assert "unknown field `llm.format`" in raised.value.message
    with pytest.raises(StepwiseError) as raised:
        parse_config("llm:\n  edit_format: patch\n")
    assert "llm.edit_format" in raised.value.message
    assert parse_config("llm:\n  edit_format: whole\n").llm.overrides() == {"edit_format": "whole"}
