"""The residue funnel: a codemod edits first, the model gets only what it left (with its
findings), and the change note says which engine changed each file."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer, call
from jobs.basics.errors import BadInputError, StepwiseError
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import BatchStatus
from tests.kit.llm import ALPHA, INSTRUCTIONS, fixed, head_text, llm_session
from tests.kit.local_e2e import assert_exit, issue_markdown, load_job, sample_files, show
from tests.kit.repos import make_repo

AREA, PERIMETER = ALPHA
CODEMOD = '''"""A codemod that knows only one call shape."""
import sys

fixed = left = 0
for path in sys.argv[1:]:
    with open(path) as handle:
        text = handle.read()
    if "legacy.old_sum(2, 3)" in text:
        text = text.replace("legacy.old_sum(2, 3)", "legacy.new_sum(2, 3)")
        fixed += 1
    elif "old_sum(" in text:
        print(f"{path}: cannot rewrite this call shape")
        left += 1
    with open(path, "w") as handle:
        handle.write(text)
print(f"fixed {fixed}, left {left}")
'''


def funnel_issue(**overrides: object) -> str:
    spec: dict[str, object] = {"recipe": "command", "replace": None,
                               "run": "python tools/codemod.py {files}", "fallback": "llm",
                               "instructions": INSTRUCTIONS, "paths": ["calc/alpha/*.py"]}
    spec.update(overrides)
    return issue_markdown(**spec)


def test_the_model_gets_only_the_codemods_residue_and_the_note_names_each_engine(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = make_repo(tmp_path / "repo", {**sample_files(), "tools/codemod.py": CODEMOD})
    server.add(call("edit_file", path=PERIMETER, old_text="legacy.old_sum(4, 4, 4)",
                    new_text="legacy.new_sum(4, 4, 4)", reason="the codemod skipped it"),
               call("finish", summary=f"{PERIMETER}: calls new_sum()"))
    session = llm_session(repo, server, edit_format="tools")
    assert_exit(session.run(parse_issue_file(funnel_issue()), yes=True), 0)

    first = server.requests[0].messages[1]["content"]
    assert f"# Batch files (the only files you may change)\n{PERIMETER}\n" in first
    assert f"A codemod ran first: ran `python tools/codemod.py {AREA} {PERIMETER}`" in first
    assert f"It changed {AREA};" in first
    assert f"{PERIMETER}: cannot rewrite this call shape\nfixed 1, left 1" in first
    assert "(targets_remain)" in first and f"{PERIMETER}:7" in first
    job = load_job(repo)
    batch = job.batch(1)
    assert batch.status is BatchStatus.COMPLETED and batch.commit is not None
    for path in ALPHA:
        assert show(repo, batch.commit, path) + "\n" == fixed(head_text(repo, path))
    assert batch.file_summaries == {AREA: "changed by the codemod (`run`)",
                                    PERIMETER: "the model: calls new_sum()"}
    note = show(repo, job.branch, job.note_path)
    assert f"{AREA} — changed by the codemod (`run`)" in note
    assert f"{PERIMETER} — the model: calls new_sum()" in note
    assert len(server.requests) == 2


def test_fallback_llm_needs_instructions_and_only_command_takes_it() -> None:
    with pytest.raises(StepwiseError) as raised:
        parse_issue_file(funnel_issue(instructions=None))
    assert "instructions" in raised.value.message and "fallback: llm" in raised.value.message
    with pytest.raises(StepwiseError) as raised:
        parse_issue_file(issue_markdown(fallback="llm"))  # recipe replace
    assert "fallback" in raised.value.message and "command" in raised.value.message


def test_a_funnel_without_a_model_endpoint_stops_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.local import LocalSession
    from tests.kit.local_e2e import NUMBER, Recorder

    for name in ("BASE_URL", "MODEL"):
        monkeypatch.delenv(f"STEPWISE_LLM_{name}", raising=False)
    repo = make_repo(tmp_path / "repo", {**sample_files(), "tools/codemod.py": CODEMOD})
    session = LocalSession(repo, NUMBER, sink=Recorder())
    with pytest.raises(BadInputError, match="STEPWISE_LLM_BASE_URL, STEPWISE_LLM_MODEL not "
                       "set"):  # the CLI exits 2 with it
        session.run(parse_issue_file(funnel_issue()), yes=True)
    assert session.store.load(NUMBER) is None  # nothing ran
