"""The test-integrity guard through the App, end to end (issue 39): signed webhooks over real
HTTP, real Redis and RQ worker, real pytest in bubblewrap, the real githubkit client against the
loopback fake GitHub. A `replace` batch that skips a test stops at `tests_weakened` (no model to
tell: the recipe is deterministic); the gate comment, the PR card, the `Stepwise` check run and
the task center say the same words; `/stepwise approve` commits it and the change note and the
card name who accepted what."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.bot.taskcenter.conftest import TOKEN
from tests.kit.llm import RECT, RECT_SOURCE, RECT_TEST_SOURCE, RECT_TESTS

pytestmark = pytest.mark.slow

ISSUE = ("Skip the slow perimeter test.\n\n```stepwise\nrecipe: replace\n"
         f"paths: ['{RECT_TESTS}']\nfind: ['def test_perimeter\\(']\n"
         "replace: \"@pytest.mark.skip(reason='slow')\\ndef test_perimeter(\"\n"
         "done_when: checks_pass\n```\n")
FINDING = "- `tests/test_rect.py::test_perimeter`: `skip` marker added"
HEAD = "the tests check less after this batch (1 finding):"
FIGURES = "tests: 2 collected, 2 passed → 2 collected, 1 passed"


def files() -> dict[str, str | bytes]:
    config = {"validate": ["python -m pytest -q -p no:cacheprovider"],
              "allow_commands": ["python"], "allow_test_edits": True,
              "evidence": {"coverage": "off"}}
    return {".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False), RECT: RECT_SOURCE,
            "tests/__init__.py": "", RECT_TESTS: RECT_TEST_SOURCE}


@pytest.fixture
def weakened_world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url, files=files(), dashboard_token=TOKEN) as opened:
        opened.gh.add_issue(REPO, "Skip the slow test", ISSUE, user="maria")
        yield opened


def test_a_weakening_batch_stops_at_its_gate_and_approve_names_who_accepted_it(
        weakened_world: World) -> None:
    world = weakened_world
    assert world.send("issues.labeled", issue_number=2, sender="maria").status_code == 202
    world.work()
    world.comment("/stepwise approve", by="maria", on=2)
    world.work()
    job = world.job(2)
    assert job.gate is not None and job.gate.kind == "tests_weakened", job.gate.report
    assert job.gate.reason == f"batch 1: {HEAD}\n{FINDING}"
    assert job.batch(1).commit is None  # nothing was pushed for the batch

    gate_comment = world.bodies(2)[-1]
    assert f"batch 1: {HEAD}\n{FINDING}" in gate_comment
    evidence = gate_comment[gate_comment.index("Evidence of batch 1:\n"):].split("\n\n")[0]
    assert f"\n- {FIGURES}; the tests check less (1 finding)" in evidence
    assert "To commit the batch with its weakened tests (named in the note): " \
        "`/stepwise approve`" in gate_comment
    at_gate = [r for r in world.gh.repos[REPO].ci.runs.values() if r.name == "Stepwise"]
    assert at_gate and at_gate[-1].conclusion == "action_required"
    assert f"Waiting at gate `tests_weakened`: batch 1: {HEAD}" in (at_gate[-1].summary or "")
    assert FINDING in (at_gate[-1].text or "")
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        client.post("/login", data={"token": TOKEN, "next": "/jobs"})
        page = client.get(f"/jobs/{job.id}")
        listed = client.get("/jobs").text
        summary = client.get(f"/api/jobs/{job.id}").json()["summary"]
    # The task center's job page (a feature's gate kind once made it fail with a 500) and list.
    assert page.status_code == 200, page.text
    assert "Needs a human: gate <code>tests_weakened</code>" in page.text
    assert HEAD in page.text and "tests/test_rect.py::test_perimeter" in page.text
    assert "<code>tests_weakened</code>" in listed
    assert summary["gate"]["kind"] == "tests_weakened"

    world.comment("/stepwise approve", by="maria", on=2)
    world.work()
    job = world.job(2)
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
    assert job.batch(1).commit is not None
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch) or ""
    # Mentions in the note are made inert (a zero-width joiner after `@`): no one is pinged.
    assert (f"  - {FIGURES}; the tests check less, accepted by @\u200dmaria:\n"
            f"  - accepted: `tests/test_rect.py::test_perimeter`: `skip` marker added\n") in note
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and "tests weakened, accepted by @maria" in (pull.body or "")
    batch_run = next(r for r in world.gh.repos[REPO].ci.runs.values()
                     if r.name == "Stepwise / batch 1")
    assert f"{FIGURES}; the tests check less, accepted by @maria:" in (batch_run.summary or "")
