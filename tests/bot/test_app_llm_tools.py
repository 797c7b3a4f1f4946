"""Server mode: the tool-using llm attempt and the residue funnel against the fake GitHub, the
real githubkit client, a real worker and the scripted model over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer, call
from jobs.kernel.model import BatchStatus
from tests.bot.conftest import REPO, open_world
from tests.kit.llm import ALPHA, API_KEY, fixed, llm_issue_text, serve_model
from tests.kit.local_e2e import config_text, sample_files

AREA, PERIMETER = ALPHA
CODEMOD = ('import sys\nfor path in sys.argv[1:]:\n    text = open(path).read()\n'
           '    open(path, "w").write(text.replace("legacy.old_sum(2, 3)", '
           '"legacy.new_sum(2, 3)"))\nprint("rewrote the (2, 3) calls only")\n')


def edit(path: str, args: str) -> object:
    return call("edit_file", path=path, old_text=f"legacy.old_sum({args})",
                new_text=f"legacy.new_sum({args})", reason="old_sum() is deprecated")


@pytest.mark.slow  # a server job per case: ~14 s each
@pytest.mark.parametrize("funnel", [False, True], ids=["tools", "funnel"])
def test_a_server_job_edits_with_tools_and_the_pull_request_names_each_engine(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch, funnel: bool) -> None:
    with ScriptedServer() as model:
        serve_model(monkeypatch, model, EDIT_FORMAT="tools", MAX_RETRIES="0")
        files = {**sample_files(config=config_text(batches_per_milestone=1)),
                 "tools/codemod.py": CODEMOD}
        if funnel:
            spec = {"recipe": "command", "run": "python tools/codemod.py {files}",
                    "fallback": "llm"}
            model.add(edit(PERIMETER, "4, 4, 4"), call("finish", summary="done"))
        else:
            spec = {"recipe": "llm"}
            model.add(call("search", pattern=r"old_sum\(", path="calc/alpha"),
                      edit(AREA, "2, 3"), edit(PERIMETER, "4, 4, 4"),
                      call("finish", summary=f"{AREA}: new_sum\n{PERIMETER}: new_sum"))
        with open_world(tmp_path, redis_url, files=files) as world:
            number = world.gh.add_issue(REPO, "Use new_sum()", llm_issue_text(**spec),
                                        user="maria")
            world.label_and_approve(number)
            job = world.job(number)
            batch = job.batch(1)
            assert batch.status is BatchStatus.COMPLETED, (job.status, job.gate, batch.attempts)
            pull = world.gh.pull_for(world.repo, job.branch)
            assert pull is not None
            texts = "\n".join([pull.body, *world.bodies(pull.number), *world.bodies(number)])
    if funnel:
        assert batch.file_summaries == {AREA: "changed by the codemod (`run`)",
                                        PERIMETER: "the model: old_sum() is deprecated"}
        assert "A codemod ran first" in model.requests[0].messages[1]["content"]
    else:
        assert batch.file_summaries == {AREA: "new_sum", PERIMETER: "new_sum"}
        assert model.requests[0].body["tools"][0]["function"]["name"] == "list_files"
    uses = [u.name for a in batch.attempts for c in a.llm_calls for u in c.tools]
    assert uses[-1] == "finish" and "edit_file" in uses
    assert API_KEY not in texts


@pytest.mark.slow  # a server job per case: ~14 s each
@pytest.mark.parametrize("edit_format", ["search_replace", "whole"])
def test_a_server_job_edits_in_a_text_format_chosen_by_the_repository(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch, edit_format: str) -> None:
    with ScriptedServer() as model:
        serve_model(monkeypatch, model, EDIT_FORMAT="diff", MAX_RETRIES="0")
        files = sample_files(config=config_text(batches_per_milestone=1,
                                                llm={"edit_format": edit_format}))
        if edit_format == "whole":
            text = "".join(f"{path}\n```python\n{fixed(str(files[path]))}```\n\n" for path in ALPHA)
        else:
            text = "".join(f"{path}\n<<<<<<< SEARCH\n    return legacy.old_sum({args})\n=======\n"
                           f"    return legacy.new_sum({args})\n>>>>>>> REPLACE\n\n"
                           for path, args in ((AREA, "2, 3"), (PERIMETER, "4, 4, 4")))
        model.add(Reply(text + f"SUMMARY {AREA}: new_sum\nSUMMARY {PERIMETER}: new_sum\n"))
        with open_world(tmp_path, redis_url, files=files) as world:
            number = world.gh.add_issue(REPO, "Use new_sum()", llm_issue_text(), user="maria")
            world.label_and_approve(number)
            batch = world.job(number).batch(1)
    assert batch.status is BatchStatus.COMPLETED, batch.attempts
    assert batch.file_summaries == {AREA: "new_sum", PERIMETER: "new_sum"}
    assert f"(edit format {edit_format})" in batch.attempts[-1].edit_summary
    assert "tools" not in model.requests[0].body
