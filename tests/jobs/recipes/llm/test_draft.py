"""Drafting a spec from an issue without a ```stepwise block: checked, shown, and nothing runs
until it is approved."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.basics.errors import BadInputError
from jobs.features.llm.usage import usage
from jobs.inputs.spec import Recipe
from jobs.inputs.spec_block import has_spec_block
from jobs.kernel.gates import Verb
from jobs.kernel.model import Gate, JobStatus
from jobs.local import LocalSession
from jobs.ports import Publication
from jobs.recipes.llm.draft import check_draft, draft_comment, draft_spec
from jobs.recipes.llm_settings import ENV_PREFIX
from tests.kit.llm import ALPHA, good_reply, llm_session, settings
from tests.kit.local_e2e import NUMBER, Recorder, assert_exit, build_sample, load_job

FREE_TEXT = """# Replace the deprecated legacy.old_sum() with legacy.new_sum()

old_sum() warns on every call. Please move the callers in calc/alpha to new_sum().
"""
SPEC = """```stepwise
recipe: llm
paths: ["{paths}"]
find: ['\\bold_sum\\(']
instructions: |
  Call legacy.new_sum() instead of legacy.old_sum().
not_doing: ["remove old_sum() itself"]
```
"""


def spec_reply(paths: str = "calc/alpha/*.py") -> Reply:
    return Reply("Here is a draft:\n\n" + SPEC.format(paths=paths))


def test_an_issue_without_a_block_gets_a_drafted_spec_and_stops_at_the_plan_gate(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    issue = tmp_path / "issue.md"
    issue.write_text(FREE_TEXT)
    server.add(spec_reply("src/**/*.py"), spec_reply())
    recorder = Recorder()
    session = llm_session(repo, server, recorder)
    outcome = session.run_file(issue, yes=True)  # --yes does not pass an unreviewed draft
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.PLAN
    assert job.spec.recipe is Recipe.LLM and job.spec.paths == ["calc/alpha/*.py"]
    assert job.untrusted_spec
    transcript = repo / ".git" / "stepwise" / "artifacts" / f"issue-{job.number}" / "draft-spec.md"
    assert usage(job).calls == 2 and transcript.is_file()
    first = server.requests[0].user_text
    assert "old_sum() warns on every call" in first and "calc/alpha/area.py" in first
    assert "`paths` match no file of the repository listing" in server.requests[1].user_text
    [draft] = [t for kind, t in recorder.seen if kind is Publication.PLAN and "Drafted" in t]
    assert 'paths: ["calc/alpha/*.py"]' in draft and "stepwise approve --repo" in draft
    assert len(server.requests) == 2  # nothing ran: no batch was asked for

    assert_exit(session.run_file(issue, yes=True), 3)  # resumed, not drafted again
    assert len(server.requests) == 2
    server.add(good_reply(repo, ALPHA))
    _, outcome = session.verb(Verb.APPROVE)
    assert_exit(outcome, 0)
    assert load_job(repo).status is JobStatus.COMPLETED


def test_without_a_model_the_missing_block_says_how_to_draft_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "MODEL"):
        monkeypatch.delenv(ENV_PREFIX + name, raising=False)
    repo = build_sample(tmp_path / "repo")
    issue = tmp_path / "issue.md"
    issue.write_text(FREE_TEXT)
    with pytest.raises(BadInputError) as raised:
        LocalSession(repo, NUMBER, sink=Recorder()).run_file(issue, yes=False)
    assert "no ```stepwise block" in raised.value.message
    assert "STEPWISE_LLM_BASE_URL" in raised.value.hint
    assert load_job_or_none(repo) is None


def load_job_or_none(repo: Path) -> object:
    return LocalSession(repo, NUMBER, sink=Recorder()).store.load(NUMBER)


def test_a_draft_that_never_checks_out_starts_nothing(tmp_path: Path,
                                                      server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    issue = tmp_path / "issue.md"
    issue.write_text(FREE_TEXT)
    server.add(Reply("recipe: sed"), spec_reply("nowhere/*.py"),
               Reply("cut", finish_reason="length"))
    with pytest.raises(BadInputError, match="could not draft a usable one in 3 tries"):
        llm_session(repo, server).run_file(issue, yes=False)
    assert load_job_or_none(repo) is None


def test_server_mode_drafts_a_comment_for_the_maintainers(server: ScriptedServer) -> None:
    from jobs.recipes.llm.client import OpenAIChat

    server.add(spec_reply())
    files = ["calc/alpha/area.py", "calc/alpha/perimeter.py", "README.md"]
    draft = draft_spec(title="Use new_sum", body="Move the callers.", files=files,
                       client=OpenAIChat(settings(server)))
    comment = draft_comment(draft)
    assert "```stepwise\nrecipe: llm" in comment and "`/stepwise approve`" in comment
    assert "Nothing runs until a maintainer approves it" in comment
    assert draft.task.spec.paths == ["calc/alpha/*.py"] and draft.calls[0].outcome == "drafted"


def test_check_draft_and_has_spec_block() -> None:
    assert has_spec_block("text\n```stepwise\nrecipe: llm\n```\n")
    assert not has_spec_block("text\n```yaml\nrecipe: llm\n```\n")
    with pytest.raises(BadInputError, match="instructions"):
        check_draft("T", "b", "recipe: llm\npaths: ['a.py']\n", ["a.py"])
