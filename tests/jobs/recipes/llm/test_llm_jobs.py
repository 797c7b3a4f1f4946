"""End-to-end llm jobs on real git repositories, the real openai client and the scripted server.

Each test scripts the model's answers and checks what the engine did with them: committed,
fed back precisely, refused, never applied, or paused at a gate.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.features.llm.usage import usage
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, Gate
from tests.kit.llm import (
    ALPHA,
    API_KEY,
    MODEL,
    answer,
    fixed,
    good_diff,
    good_reply,
    head_text,
    llm_issue,
    llm_session,
    unified,
)
from tests.kit.local_e2e import (
    Recorder,
    assert_exit,
    build_sample,
    changed_paths,
    load_job,
    sample_files,
    show,
)
from tests.kit.repos import git, make_repo


def outcomes(job: Job, batch: int = 1) -> list[str]:
    return [c.outcome for a in job.batch(batch).attempts for c in a.llm_calls]


def feedback_sent(server: ScriptedServer, request: int) -> str:
    """The last user message of a request: the feedback on the previous answer."""
    return server.requests[request].messages[-1]["content"]


def assert_committed_good(repo: Path, job: Job) -> None:
    commit = job.batch(1).commit
    assert commit is not None and job.batch(1).status is BatchStatus.COMPLETED
    assert changed_paths(repo, commit) == sorted(ALPHA)
    for path in ALPHA:
        assert show(repo, commit, path) + "\n" == fixed(head_text(repo, path))


def test_a_good_diff_is_committed_with_its_evidence(tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    server.add(good_reply(repo))
    recorder = Recorder()
    assert_exit(llm_session(repo, server, recorder).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    assert_committed_good(repo, job)
    attempt = job.batch(1).attempts[-1]
    [call] = attempt.llm_calls
    assert (call.model, call.finish_reason, call.outcome, call.round) == (MODEL, "stop", "validated", 1)
    assert call.tokens_in > 100 and call.tokens_out > 10 and call.latency_s >= 0
    assert (usage(job).calls, usage(job).tokens) == (1, call.tokens_in + call.tokens_out)
    assert len(attempt.commands) == 1  # validation ran once for the tree the editor had checked
    assert attempt.transcript == ".git/stepwise/artifacts/issue-7/batch-1-attempt-1.md"
    transcript = (repo / attempt.transcript).read_text()
    assert "outcome **validated**" in transcript and "legacy.new_sum(2, 3)" in transcript
    assert job.batch(1).file_summaries == {p: "calls legacy.new_sum() instead of old_sum()"
                                           for p in ALPHA}
    note = show(repo, job.branch, job.note_path)
    assert "calc/alpha/area.py — calls legacy.new_sum() instead of old_sum()" in note
    assert "## Model usage" in note and attempt.transcript in note
    [request] = server.requests
    assert request.body["model"] == MODEL and request.body["max_tokens"] == 4096
    assert request.headers["authorization"] == f"Bearer {API_KEY}"  # the key is really used
    assert any("model round 1" in text for _, text in recorder.seen)


def test_a_malformed_diff_is_repaired_in_the_next_round(tmp_path: Path,
                                                        server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    bad = good_diff(repo, ALPHA).replace("@@ -4,4 +4,4 @@", "@@ -4,6 +4,4 @@", 1)
    server.add(Reply(answer(bad)), good_reply(repo))
    assert_exit(llm_session(repo, server).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    assert outcomes(job) == ["parse_error", "validated"]
    feedback = feedback_sent(server, 1)
    assert "line 9 of your diff: `--- a/calc/alpha/perimeter.py` starts a new file or hunk " \
        "while hunk `@@ -4,6 +4,4 @@` still expects 2 old-file line(s)" in feedback
    assert_committed_good(repo, job)


def test_a_hunk_that_does_not_apply_is_fixed_with_the_closest_region(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    wrong = good_diff(repo, ALPHA).replace(" def area():", " def area(self):", 1)
    server.add(Reply(answer(wrong)), good_reply(repo))
    assert_exit(llm_session(repo, server).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    assert outcomes(job) == ["apply_failed", "validated"]
    feedback = feedback_sent(server, 1)
    assert "Hunk 1 of calc/alpha/area.py (`@@ -4,4 +4,4 @@`) does not apply" in feedback
    assert "closest matching region of the real file is lines 4–7" in feedback
    assert "    6| def area():" in feedback
    assert "your hunk has `def area(self):` where line 6 of the file is `def area():`" in feedback
    assert_committed_good(repo, job)


def test_a_diff_touching_a_file_outside_the_batch_is_refused(tmp_path: Path,
                                                             server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    beta = "calc/beta/score.py"
    outside = good_diff(repo, ALPHA) + unified(beta, head_text(repo, beta),
                                               fixed(head_text(repo, beta)))
    server.add(Reply(answer(outside)), good_reply(repo))
    assert_exit(llm_session(repo, server).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    assert outcomes(job) == ["guard_refused", "validated"]
    feedback = feedback_sent(server, 1)
    assert "The diff guard refused your change" in feedback
    assert f"- {beta}: outside_batch" in feedback
    assert_committed_good(repo, job)  # the refused file is not in the commit


def test_a_diff_editing_a_test_is_refused_and_the_attempts_reach_the_failure_gate(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    test = "tests/test_calc.py"
    cheat = good_diff(repo, ALPHA) + unified(test, head_text(repo, test),
                                             head_text(repo, test).replace("15)", "16)"))
    server.add(Reply(answer(cheat)), Reply(answer(cheat)))
    outcome = llm_session(repo, server, max_rounds=1).run(llm_issue(), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    assert job.gate.report is not None and job.gate.report.code == "guard_refused"
    assert f"{test}: test_edit" in job.gate.report.message
    assert outcomes(job) == ["guard_refused", "guard_refused"]
    assert git(repo, "rev-parse", job.branch) == job.base_sha  # nothing committed
    assert "test_edit — edits a test file" in server.requests[1].user_text  # told why, next try


def test_an_answer_cut_off_for_length_is_never_applied_and_files_go_one_at_a_time(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    wrong = good_diff(repo, ALPHA).replace("new_sum", "WRONG_sum")  # parses, but must not land
    server.add(Reply(answer(wrong), finish_reason="length"),
               good_reply(repo, ALPHA[:1]), good_reply(repo, ALPHA[1:]))
    assert_exit(llm_session(repo, server).run(llm_issue(), yes=True), 0)
    job = load_job(repo)
    calls = [c for a in job.batch(1).attempts for c in a.llm_calls]
    assert [c.outcome for c in calls] == ["truncated", "validated", "validated"]
    assert calls[0].finish_reason == "length" and "one file at a time" in calls[0].detail
    assert [c.files for c in calls[1:]] == [[ALPHA[0]], [ALPHA[1]]]
    assert f"This request covers only: {ALPHA[0]}" in server.requests[1].user_text
    assert "one file at a time because an answer was cut off" in job.batch(1).summary
    assert_committed_good(repo, job)
    assert "WRONG_sum" not in git(repo, "log", "-p", job.branch)


def test_a_diff_that_ends_mid_hunk_is_never_applied(tmp_path: Path,
                                                    server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    one = ALPHA[:1]
    cut = good_diff(repo, one).split("-    return")[0]  # ends inside the hunk, block unclosed
    server.add(Reply(answer(cut, close=False)), good_reply(repo, one))
    session = llm_session(repo, server)
    assert_exit(session.run(llm_issue(paths=list(one)), yes=True), 0)
    job = load_job(repo)
    assert outcomes(job) == ["truncated", "validated"]
    assert "cut off at the output limit" in feedback_sent(server, 1)


def test_a_diff_that_fails_validation_twice_pauses_at_the_failure_gate(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo = build_sample(tmp_path / "repo")
    # One file: a batch of several that fails its attempts would be split after them.
    broken = good_diff(repo, ALPHA[:1]).replace("new_sum", "newer_sum")
    server.add(Reply(answer(broken)), Reply(answer(broken)))
    outcome = llm_session(repo, server, max_rounds=1).run(llm_issue(paths=[ALPHA[0]]), yes=True)
    assert_exit(outcome, 4)
    job = load_job(repo)
    assert job.gate is not None and job.gate.kind is Gate.FAILURE
    report = job.gate.report
    assert report is not None and report.code == "validation_failed"
    assert "newer_sum" in report.evidence["output_tail"]
    assert outcomes(job) == ["validation_failed", "validation_failed"]
    assert [len(a.commands) for a in job.batch(1).attempts] == [1, 1]
    second = server.requests[1].user_text
    assert "# Why the previous attempt at this batch failed" in second and "newer_sum" in second
    assert git(repo, "rev-parse", job.branch) == job.base_sha


def test_a_large_file_is_sent_as_windows_with_the_omission_stated(
        tmp_path: Path, server: ScriptedServer) -> None:
    big = "calc/alpha/big.py"
    body = [f"X{n} = {n}\n" for n in range(1, 3001)]
    body[1499] = "TOTAL = legacy.old_sum(1, 2)\n"
    files = {**sample_files(), big: "from calc import legacy\n" + "".join(body[1:])}
    repo = make_repo(tmp_path / "repo", files)
    text = head_text(repo, big)
    server.add(Reply(answer(unified(big, text, fixed(text)))))
    assert_exit(llm_session(repo, server, context_tokens=1000).run(
        llm_issue(paths=[big]), yes=True), 0)
    user = server.requests[0].user_text
    assert re.search(r"# Left out of this request\n- calc/alpha/big\.py: lines 1–1459, "
                     r"1541–3000 \(of 3000\); not shown", user)
    assert "[lines 1–1459 not shown]" in user and " 1500| TOTAL = legacy.old_sum(1, 2)" in user
    assert "X10 = 10" not in user
    job = load_job(repo)
    assert job.batch(1).status is BatchStatus.COMPLETED
    assert "TOTAL = legacy.new_sum(1, 2)" in show(repo, job.branch, big)
