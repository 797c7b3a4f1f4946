"""Edges of the llm editor: batches too large for the context, the scope gate, the demo's script,
and the docs' settings table (docs/guides/llm.md)."""

from __future__ import annotations

from pathlib import Path

from bot.demo.llm_demo import DemoModel, demo_settings, write_issue
from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.kernel.model import BatchStatus, Gate
from jobs.local import LocalSession, read_issue
from jobs.recipes.llm_settings import ENV_PREFIX, LlmSettings
from tests.kit.llm import answer, good_reply, head_text, llm_issue, llm_session, unified
from tests.kit.local_e2e import (
    VALIDATE,
    Recorder,
    assert_exit,
    build_sample,
    changed_paths,
    config_text,
    load_job,
    module_source,
    sample_files,
)
from tests.kit.repos import git, make_repo

PADDED = ("calc/alpha/area.py", "calc/alpha/perimeter.py")


def padded_repo(root: Path, lines: int) -> Path:
    files = dict(sample_files())
    for path in PADDED:
        pad = "".join(f"# note {n}: the area and perimeter helpers\n" for n in range(lines))
        files[path] = pad + module_source(path)
    return make_repo(root, files)


def test_a_batch_too_large_for_the_context_is_asked_one_file_at_a_time(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = padded_repo(tmp_path / "repo", 120)  # each file ~5,500 characters
    for path in PADDED:
        text = head_text(repo, path)
        server.add(Reply(answer(unified(path, text, text.replace("# note 0:", "# Note 0:")))))
    issue = llm_issue(find=None, done_when="checks_pass", paths=list(PADDED))
    assert_exit(llm_session(repo, server, context_tokens=2000).run(issue, yes=True), 0)
    assert [f"This request covers only: {p}" in r.user_text
            for p, r in zip(PADDED, server.requests, strict=True)] == [True, True]
    job = load_job(repo)
    assert "one file at a time because the batch did not fit the context budget" in \
        job.batch(1).summary


def test_a_file_too_large_even_alone_fails_the_attempt_without_a_call(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = padded_repo(tmp_path / "repo", 400)
    issue = llm_issue(find=None, done_when="checks_pass", paths=["calc/alpha/area.py"])
    outcome = llm_session(repo, server, context_tokens=1000, max_rounds=1).run(issue, yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.report is not None
    assert job.gate.report.code == "llm_context_too_large"
    assert "STEPWISE_LLM_CONTEXT_TOKENS" in job.gate.report.hint
    assert server.requests == []


def test_an_in_scope_file_outside_the_batch_in_the_last_round_opens_the_scope_gate(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    beta = "calc/beta/score.py"
    wider = good_reply(repo).text.replace(
        "```\nSUMMARY", unified(beta, head_text(repo, beta),
                               head_text(repo, beta).replace("old_sum", "new_sum")) + "```\nSUMMARY", 1)
    server.add(Reply(wider))
    outcome = llm_session(repo, server, max_rounds=1).run(llm_issue(paths=["calc/**/*.py"]),
                                                          yes=True)
    assert_exit(outcome, 3)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.SCOPE and job.gate.batch == 1
    assert [c.outcome for c in job.batch(1).attempts[0].llm_calls] == ["gate"]


def test_what_validation_writes_is_not_committed_with_the_edit(
        tmp_path: Path, server: ScriptedServer) -> None:
    junk = "python -c \"open('junk.txt', 'w').write('cache')\""
    repo = make_repo(tmp_path / "repo", sample_files(config=config_text(validate=[junk, VALIDATE])))
    server.add(good_reply(repo))
    assert_exit(llm_session(repo, server).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    assert changed_paths(repo, job.batch(1).commit or "") == ["calc/alpha/area.py",
                                                               "calc/alpha/perimeter.py"]
    assert [len(a.commands) for a in job.batch(1).attempts] == [2]  # validated once


def test_the_scripted_demo_shows_every_kind_of_feedback(tmp_path: Path) -> None:
    from bot.demo.demo import prepare_demo

    repo, _ = prepare_demo(tmp_path)
    with ScriptedServer(script=[DemoModel(repo)] * 20) as server:
        recorder = Recorder()
        session = LocalSession(repo, 1, sink=recorder, llm=demo_settings(server))
        assert_exit(session.run(read_issue(write_issue(tmp_path)), yes=True), 0)
    job = session.load()
    assert all(b.status is BatchStatus.COMPLETED for b in job.batches)
    seen = [c.outcome for b in job.batches for a in b.attempts for c in a.llm_calls]
    for outcome in ("parse_error", "apply_failed", "guard_refused", "validation_failed",
                    "truncated", "validated"):
        assert outcome in seen, seen
    left = git(repo, "grep", "-l", "-e", "money.as_text(", "-e", "format_amout", job.branch,
               "--", "shelf", check=False)
    assert left == ""  # every caller moved, no typo landed, the tests untouched:
    assert git(repo, "diff", "--stat", job.base_sha, job.branch, "--", "tests") == ""
    assert any("model round 1" in text for _, text in recorder.seen)


def test_the_docs_document_every_llm_setting() -> None:
    from tests.kit.docs import page

    readme = page("guides/llm.md")
    for name in LlmSettings.model_fields:
        assert f"`{ENV_PREFIX}{name.upper()}`" in readme, name
    assert "stepwise demo --llm-scripted" in readme
