"""Stepwise's check runs as REST bodies: batch evidence, the job's state, idempotency keys, limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from jobs.basics.github_limits import CHECK_OUTPUT_BYTES
from jobs.notes.annotations import Annotation
from jobs.notes.check_runs import (
    JOB_CHECK_NAME,
    JobCheckState,
    batch_check,
    batch_check_name,
    job_check,
)


@dataclass
class Ran:
    argv: list[str] = field(default_factory=lambda: ["python", "-m", "pytest", "-q"])
    exit_code: int = 0
    duration_s: float = 1.25
    output_tail: str = "3 passed"
    timed_out: bool = False


def test_a_validated_batch_shows_each_command_and_the_attempts_before() -> None:
    failed = Ran(exit_code=1, output_tail="tests/test_a.py:3: AssertionError")
    draft = batch_check(job_id="j1", number=2, total=5, files=["src/a.py", "src/b.py"],
                        head_sha="c" * 40, commands=[Ran(), Ran(argv=["ruff", "check", "."])],
                        earlier_failures=[failed],
                        annotations=[Annotation("tests/test_a.py", 3, "AssertionError",
                                                "warning")])
    body = draft.payload()
    assert body["name"] == batch_check_name(2) == "Stepwise / batch 2"
    assert body["external_id"] == "j1:batch:2" and body["head_sha"] == "c" * 40
    assert (body["status"], body["conclusion"]) == ("completed", "success")
    assert body["output"]["title"] == "Batch 2/5 validated: 2 commands passed"
    summary = body["output"]["summary"]
    assert "| `python -m pytest -q` | 0 | 1.2 s |" in summary and "`ruff check .`" in summary
    assert "1 earlier failed attempt before this one" in summary and "| 1 |" in summary
    assert "- `src/b.py`" in summary
    assert "tests/test_a.py:3: AssertionError" in body["output"]["text"]
    assert body["output"]["annotations"] == [{
        "path": "tests/test_a.py", "start_line": 3, "end_line": 3,
        "annotation_level": "warning", "message": "AssertionError"}]


def test_a_timeout_and_a_failure_conclude_failure() -> None:
    draft = batch_check(job_id="j", number=1, total=1, files=["a"], head_sha="a" * 40,
                        commands=[Ran(exit_code=0, timed_out=True)])
    assert draft.conclusion == "failure" and "timed out" in draft.summary


def test_the_job_run_follows_the_job() -> None:
    working = job_check(job_id="j", head_sha="h" * 40, state=JobCheckState.WORKING,
                        headline="batch 3 of 9 in progress").payload()
    assert working["name"] == JOB_CHECK_NAME and working["external_id"] == "j:job"
    assert working["status"] == "in_progress" and "conclusion" not in working
    gate = job_check(job_id="j", head_sha="h" * 40, state=JobCheckState.AT_GATE,
                     headline="milestone 1 is done", command="/stepwise approve").payload()
    assert gate["conclusion"] == "action_required"
    assert "```\n/stepwise approve\n```" in gate["output"]["summary"]
    done = job_check(job_id="j", head_sha="h" * 40, state=JobCheckState.DONE, headline="done")
    assert done.payload()["conclusion"] == "success"


def test_output_and_annotations_stay_within_github_limits() -> None:
    many = [Annotation("a.py", n, "x") for n in range(1, 80)]
    huge = Ran(exit_code=1, output_tail="y" * 200_000)
    body = batch_check(job_id="j", number=1, total=1, files=["a.py"], head_sha="a" * 40,
                       commands=[huge], annotations=many).payload()
    assert len(body["output"]["annotations"]) == 79  # all: sent 50 a request by the adapter
    assert len(body["output"]["text"].encode()) <= CHECK_OUTPUT_BYTES
    assert "Too long for GitHub" in body["output"]["text"]
    assert "the task center" in body["output"]["text"]


def test_non_ascii_output_is_cut_by_bytes_as_github_counts_them() -> None:
    """65,000 characters of 'ü' are 130,000 bytes: GitHub would answer 422."""
    tail = "\n".join("ü" * 99 for _ in range(700))  # 69,999 characters, 139,300 bytes
    body = batch_check(job_id="j", number=1, total=1, files=["a.py"], head_sha="a" * 40,
                       commands=[Ran(exit_code=1, output_tail=tail)]).payload()
    text = body["output"]["text"]
    assert len(text.encode()) <= CHECK_OUTPUT_BYTES < len(text) * 2
    assert text.count("ü" * 99) > 300  # the head is kept, whole lines
    title = job_check(job_id="j", head_sha="h" * 40, state=JobCheckState.AT_GATE,
                      headline="é" * 400, command="/stepwise approve").payload()["output"]
    assert len(title["title"]) <= 255 and "/stepwise approve" in title["summary"]
