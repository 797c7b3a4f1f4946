"""The token budget and its gate; the API key kept out of every log, artifact, record and note."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.features.llm.budget import BUDGET
from jobs.features.llm.usage import usage
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus, JobStatus
from tests.kit.llm import (
    API_KEY,
    answer,
    good_diff,
    good_reply,
    llm_issue,
    llm_session,
)
from tests.kit.local_e2e import Recorder, assert_exit, build_sample, load_job, state_path
from tests.kit.repos import git


def test_the_budget_running_out_opens_the_budget_gate_and_approve_grants_one_more(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    malformed = good_diff(repo, ("calc/alpha/area.py",)).replace("@@ -4,4", "@@ -4,9")
    server.add(Reply(answer(malformed), prompt_tokens=400, completion_tokens=300))
    session = llm_session(repo, server, token_budget=600)
    outcome = session.run(llm_issue(), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind == BUDGET and job.gate.batch == 1
    assert "spent 700 tokens of its 600-token budget" in job.gate.reason
    assert "grant one more budget" in outcome.message
    assert job.batch(1).status is BatchStatus.PENDING
    assert job.batch(1).attempts[0].outcome == "gated"
    assert (usage(job).tokens, usage(job).calls, len(server.requests)) == (700, 1, 1)

    server.add(Reply(answer(good_diff(repo, ("calc/alpha/area.py", "calc/alpha/perimeter.py"))),
                     prompt_tokens=200, completion_tokens=100))
    _, outcome = session.verb(Verb.APPROVE)
    assert_exit(outcome, 0)
    job = load_job(repo)
    assert usage(job).budget_grants == 1 and usage(job).tokens == 1000
    assert job.batch(1).status is BatchStatus.COMPLETED


def test_skipping_at_the_budget_gate_grants_nothing(tmp_path: Path,
                                                    server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    server.add(Reply("no diff today", prompt_tokens=500, completion_tokens=200))
    session = llm_session(repo, server, token_budget=600)
    assert_exit(session.run(llm_issue(paths=["calc/**/*.py"]), yes=True), 4)
    _, outcome = session.verb(Verb.SKIP, reason="too costly")
    assert_exit(outcome, 4)  # the next batch finds the budget still spent
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.SKIPPED
    assert job.gate is not None and job.gate.kind == BUDGET and job.gate.batch == 2
    assert usage(job).budget_grants == 0 and len(server.requests) == 1


def test_the_api_key_is_in_no_log_artifact_record_note_or_output(
        tmp_path: Path, server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    repo = build_sample(tmp_path / "repo")
    # The server echoes the key in an error (as some do); then a failing and a good round.
    server.add(Reply(f"Incorrect API key provided: {API_KEY}. Check it.", status=400),
               Reply(answer(good_diff(repo, ("calc/alpha/area.py",)).replace("new_", "bad_"))),
               good_reply(repo))
    recorder = Recorder()
    caplog.set_level(logging.DEBUG)
    assert_exit(llm_session(repo, server, recorder).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    codes = [a.error.code if a.error else None for a in job.batch(1).attempts]
    assert codes == ["llm_request_refused", None]
    first = job.batch(1).attempts[0].error
    assert first is not None and "Incorrect API key provided: [redacted]" in first.message
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in server.requests)
    texts = {"log": "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records),
             "publications": "\n".join(text for _, text in recorder.seen),
             "record": state_path(repo).read_text(),
             "history": git(repo, "log", "-p", "--all")}
    artifacts = sorted((repo / ".git" / "stepwise").rglob("*"))
    assert any(p.suffix == ".md" and "artifacts" in p.parts for p in artifacts)
    for path in artifacts:
        if path.is_file():
            texts[str(path)] = path.read_text(errors="replace")
    for where, text in texts.items():
        assert API_KEY not in text, where
    assert any("Incorrect API key provided: [redacted]" in text for text in texts.values())


def test_the_cli_never_prints_the_key(tmp_path: Path, server: ScriptedServer) -> None:
    from tests.kit.local_e2e import STEPWISE, write_issue

    repo = build_sample(tmp_path / "repo")
    server.add(good_reply(repo))
    issue = write_issue(tmp_path / "issue.md", recipe="llm", replace=None,
                        paths=["calc/alpha/*.py"], instructions="Use legacy.new_sum().")
    env = {"PATH": str(STEPWISE.parent) + ":/usr/bin:/bin", "STEPWISE_LLM_API_KEY": API_KEY,
           "STEPWISE_LLM_MAX_RETRIES": "0", "STEPWISE_LLM_EDIT_FORMAT": "diff", "COLUMNS": "200",
           "NO_COLOR": "1"}
    done = subprocess.run([str(STEPWISE), "run", "--repo", str(repo), "--issue", str(issue),
                           "--number", "7", "--yes", "--llm-base-url", server.url,
                           "--llm-model", "scripted-model", "--llm-budget", "50000"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "model round 1" in done.stdout and "validated" in done.stdout
    assert API_KEY not in done.stdout + done.stderr
    assert load_job(repo).status is JobStatus.COMPLETED
