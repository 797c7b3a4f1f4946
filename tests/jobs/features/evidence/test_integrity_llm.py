"""The test-integrity guard end to end, through `stepwise run` on real git repositories with the
real openai client and a scripted model: in each way an editor weakens a test to get green the
model is told once ("you weakened test X: restore it and fix the code instead"), then the batch
stops at the `tests_weakened` gate naming the test and what changed; an honest edit commits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bot.demo.scripted_llm import ScriptedServer
from jobs.local import local_user
from tests.kit.llm import (
    API_KEY,
    MODEL,
    PYTEST_INI,
    RECT,
    RECT_TESTS,
    honest_reply,
    rect_files,
    weakening_reply,
)
from tests.kit.local_e2e import cli, load_job, show
from tests.kit.repos import make_repo

NUMBER = 3
CONFIG = yaml.safe_dump({
    "validate": ["python -m pytest"], "allow_commands": ["python"], "allow_test_edits": True,
    "allow_deletions": True, "batch_size": 5, "batches_per_milestone": 1,
}, sort_keys=False)
ISSUE = ("# Add type hints to rect.py\n\nType the rectangle helpers.\n\n```stepwise\n"
         f"recipe: llm\npaths: [{RECT}, {RECT_TESTS}, {PYTEST_INI}]\n"
         "instructions: Add type hints to rect.py; keep the behaviour.\n```\n")
BEFORE = "tests: 2 collected, 2 passed → "


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


def llm_env(server: ScriptedServer) -> dict[str, str]:
    return {"STEPWISE_LLM_BASE_URL": server.url, "STEPWISE_LLM_MODEL": MODEL,
            "STEPWISE_LLM_API_KEY": API_KEY, "STEPWISE_LLM_EDIT_FORMAT": "diff",
            "STEPWISE_LLM_MAX_RETRIES": "0"}


def start(tmp_path: Path, config: str = CONFIG) -> tuple[Path, Path]:
    repo = make_repo(tmp_path / "repo", rect_files(config=config))
    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE, encoding="utf-8")
    return repo, issue


def run(repo: Path, issue: Path, server: ScriptedServer) -> tuple[int, str]:
    done = cli("run", "--repo", repo, "--issue", issue, "--number", str(NUMBER), "--yes",
               env=llm_env(server))
    return done.code, done.text


HEAD = "batch 1: the tests check less after this batch ({count}):\n"
# Each way of weakening: the findings the gate names, and the tests before → after.
EXPECTED = {
    "delete_assert": (["`tests/test_rect.py::test_area`: assertion removed: "
                       "`-assert area(0, 5) == 0`"], "3 collected, 3 passed"),
    "skip": (["`tests/test_rect.py::test_area`: `skip` marker added"],
             "3 collected, 2 passed"),
    "xfail": (["`tests/test_rect.py::test_perimeter`: `xfail` marker added"],
              "3 collected, 3 passed"),
    "expected_value": (["`tests/test_rect.py::test_area`: expected value changed in an "
                        "assertion: `-assert area(2, 3) == 6` / `+assert area(2, 3) == 7`"],
                       "3 collected, 3 passed"),
    "delete_test": (["`tests/test_rect.py::test_perimeter`: test removed"],
                    "2 collected, 2 passed"),
    "swallow": (["`tests/test_rect.py::test_area`: assertion failures swallowed by a try/except "
                 "(or suppress) that does not re-raise"], "3 collected, 3 passed"),
    "deselect_config": (["`pytest.ini (addopts)`: test selection changed: deselects tests: "
                         "`--q` / `+-q --deselect tests/test_rect.py::test_perimeter`",
                         "`the test run`: fewer tests collected: 3 → 2 (JUnit XML)"],
                        "2 collected, 2 passed"),
    "delete_file": (["`tests/test_rect.py`: test file deleted (2 tests: test_area, "
                     "test_perimeter)"], "1 collected, 1 passed"),
    "rename": (["`tests/test_rect.py::test_perimeter`: renamed out of collection to "
                "`check_perimeter`"], "2 collected, 2 passed"),
    "deselect_k": (["`pytest.ini (addopts)`: test selection changed: deselects tests: `--q` / "
                    "`+-q -k 'not perimeter'`",
                    "`the test run`: fewer tests collected: 3 → 2 (JUnit XML)"],
                   "2 collected, 2 passed"),
    "testpaths": (["`pytest.ini (testpaths)`: test selection changed: changes which tests run: "
                   "`+tests/test_square.py`",
                   "`the test run`: fewer tests collected: 3 → 1 (JUnit XML)"],
                  "1 collected, 1 passed"),
}


@pytest.mark.parametrize("way", sorted(EXPECTED))
def test_each_weakening_is_told_to_the_model_once_then_stops_at_the_gate(
        tmp_path: Path, server: ScriptedServer, way: str) -> None:
    repo, issue = start(tmp_path)
    server.add(weakening_reply(repo, way), weakening_reply(repo, way))
    code, output = run(repo, issue, server)
    assert code == 4, output
    findings, after = EXPECTED[way]
    count = f"{len(findings)} finding{'s' if len(findings) > 1 else ''}"
    reason = HEAD.format(count=count) + "\n".join(f"- {f}" for f in findings)
    job = load_job(repo, NUMBER)
    assert job.gate is not None and job.gate.kind == "tests_weakened"
    assert job.gate.reason == reason
    # The CLI shows the same words (rendered: code spans without their backticks).
    assert "Waiting at gate tests_weakened (tests_weakened-2): batch 1: the tests check less " \
        f"after this batch ({count}):" in output
    # The evidence of the batch, as the card, the check run and the note say it.
    evidence = output[output.index("Evidence of batch 1:\n"):]
    assert f"\n- tests: 3 collected, 3 passed → {after}; the tests check less ({count})\n" \
        in evidence.split("\n\n")[0] + "\n"
    assert "To commit the batch with its weakened tests (named in the note):\n  stepwise approve" \
        in output
    # The model was told once, by name, before the gate opened.
    [first, second] = server.requests
    feedback = second.messages[-1]["content"]
    tests = sorted({f.split("`")[1] for f in findings})
    named = ", ".join(f"`{t}`" for t in tests)
    told = (f"test {named}: restore it" if len(tests) == 1 else f"tests {named}: restore them")
    assert f"# Why the previous attempt at this batch failed\nyou weakened {told} and fix the " \
        "code instead" in feedback
    assert findings[0] in feedback
    assert "you weakened" not in first.messages[-1]["content"]
    assert job.batch(1).commit is None and job.head_sha == job.base_sha  # nothing committed
    assert [a.error.code if a.error else a.outcome for a in job.batch(1).attempts] == \
        ["tests_weakened", "gated"]


def test_an_honest_edit_commits_and_the_note_shows_the_tests_before_and_after(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo, issue = start(tmp_path)
    server.add(honest_reply(repo))
    code, output = run(repo, issue, server)
    assert code == 0, output
    job = load_job(repo, NUMBER)
    assert job.batch(1).commit is not None and job.gate is None
    assert len(server.requests) == 1  # nothing was sent back
    note = show(repo, job.branch, job.note_path)
    evidence = note[note.index("## Evidence\n"):note.index("## Final review")]
    assert "\n- Batch 1:\n" in evidence
    assert "\n  - tests: 3 collected, 3 passed → 3 collected, 3 passed; nothing weakened\n" \
        in evidence


def test_approve_commits_the_weakened_batch_and_the_note_names_who_accepted_what(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo, issue = start(tmp_path)
    server.add(*[weakening_reply(repo, "skip")] * 3)  # told once, the gate, then run again
    code, output = run(repo, issue, server)
    assert code == 4, output
    done = cli("approve", "--repo", repo, "--number", str(NUMBER), env=llm_env(server))
    assert done.code == 0, done.text
    assert "the weakened tests are accepted by " + local_user() in done.text
    job = load_job(repo, NUMBER)
    commit = job.batch(1).commit
    assert commit is not None
    assert "@pytest.mark.skip" in show(repo, commit, RECT_TESTS)
    note = show(repo, job.branch, job.note_path)
    evidence = note[note.index("## Evidence\n"):note.index("## Final review")]
    assert ("\n  - tests: 3 collected, 3 passed → 3 collected, 2 passed; the tests check less, "
            f"accepted by {local_user()}:\n"
            "  - accepted: `tests/test_rect.py::test_area`: `skip` marker added\n") in evidence
    status = cli("status", "--repo", repo, "--number", str(NUMBER))
    assert f"tests weakened, accepted by {local_user()}" in status.text


def test_retry_at_the_gate_runs_the_batch_again_and_skip_leaves_it_out(
        tmp_path: Path, server: ScriptedServer) -> None:
    repo, issue = start(tmp_path)
    server.add(weakening_reply(repo, "delete_test"), weakening_reply(repo, "delete_test"),
               honest_reply(repo))
    assert run(repo, issue, server)[0] == 4
    done = cli("retry", "--repo", repo, "--number", str(NUMBER), env=llm_env(server))
    assert done.code == 0, done.text
    job = load_job(repo, NUMBER)
    commit = job.batch(1).commit
    assert commit is not None
    assert "def test_perimeter" in show(repo, commit, RECT_TESTS)

    other = tmp_path / "other"
    other.mkdir()
    repo, issue = start(other)
    server.add(weakening_reply(repo, "xfail"), weakening_reply(repo, "xfail"))
    assert run(repo, issue, server)[0] == 4
    skipped = cli("skip", "--repo", repo, "--number", str(NUMBER), "keeps", "the", "xfail",
                  env=llm_env(server))
    assert skipped.code == 0, skipped.text
    job = load_job(repo, NUMBER)
    assert job.batch(1).status == "skipped" and job.batch(1).reason == "keeps the xfail"


def test_without_a_retry_left_the_weakening_goes_straight_to_the_gate(
        tmp_path: Path, server: ScriptedServer) -> None:
    config = CONFIG + "max_failed_attempts: 1\n"  # telling the model would use the last try
    repo, issue = start(tmp_path, config)
    server.add(weakening_reply(repo, "skip"))
    code, output = run(repo, issue, server)
    assert code == 4, output
    job = load_job(repo, NUMBER)
    assert job.gate is not None and job.gate.kind == "tests_weakened"
    assert len(server.requests) == 1 and len(job.batch(1).attempts) == 1
