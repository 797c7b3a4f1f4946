"""The evidence through the App, end to end (issue 39): signed webhooks over real HTTP, real
Redis and RQ worker, real pytest under coverage in bubblewrap, the real githubkit client against
the loopback fake GitHub. A batch whose tests run 1 of 61 changed lines stops at
`uncovered_change`; the gate comment, the PR card, the `Stepwise` check runs (61 annotations,
sent 50 a request) and the change note say the same words; the plan states the edit shapes of
a dry run and the forecast, the note sets the forecast against the actual."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World, open_world
from tests.bot.taskcenter.conftest import TOKEN
from tests.jobs.features.evidence.coverage_repos import HELPERS, python_module

pytestmark = pytest.mark.slow

ORPHAN_LINES = 60
ISSUE = ("Move callers of old_helper to new_helper.\n\n```stepwise\nrecipe: replace\n"
         "paths: ['pkg/*.py']\nexclude: ['pkg/helpers.py']\nfind: ['\\bold_helper\\(']\n"
         "replace: 'new_helper('\n```\n")


def orphan_module() -> str:
    body = "".join(f"    v{n} = old_helper({n})\n" for n in range(ORPHAN_LINES))
    return ("from pkg.helpers import new_helper, old_helper  # noqa: F401\n\n\ndef orphan():\n"
            + body + "    return v0\n")


def files() -> dict[str, str | bytes]:
    config = {"validate": ["python -m pytest -q -p no:cacheprovider"],
              "allow_commands": ["python"], "batch_size": 5,
              "evidence": {"min_changed_coverage": 80}}
    return {".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False),
            "pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/used.py": python_module("used"),
            "pkg/orphan.py": orphan_module(),
            "tests/test_used.py": "from pkg.used import used\n\n\ndef test_used():\n"
                                  "    assert used(2) == 4\n"}


@pytest.fixture
def evidence_world(tmp_path: Path, redis_url: str) -> Iterator[World]:
    with open_world(tmp_path, redis_url, files=files(), dashboard_token=TOKEN) as opened:
        opened.gh.add_issue(REPO, "Use new_helper", ISSUE, user="maria")
        yield opened


def test_uncovered_changes_stop_at_their_gate_and_every_place_says_the_same(
        evidence_world: World) -> None:
    world = evidence_world
    assert world.send("issues.labeled", issue_number=2, sender="maria").status_code == 202
    world.work()
    plan = "\n".join(world.bodies(2))
    assert "- edit shapes of a dry run of batch 1 (2 files): 2 kinds of edit in 2 hunks" in plan
    assert "- forecast: 1 validation run (one a batch; at most " in plan

    world.comment("/stepwise approve", by="maria", on=2)
    world.work()
    job = world.job(2)
    assert job.gate is not None and job.gate.kind == "uncovered_change"
    figure = "changed lines run by the tests: 1 of 61 (1%)"
    gate_comment = world.bodies(2)[-1]
    assert f"{figure}, below `evidence.min_changed_coverage` (80%)" in gate_comment
    assert "changed lines the tests did not run: `pkg/orphan.py:5`, `pkg/orphan.py:6`" in \
        gate_comment and "and 50 more" in gate_comment
    assert "/stepwise approve" in gate_comment
    at_gate = [r for r in world.gh.repos[REPO].ci.runs.values() if r.name == "Stepwise"]
    assert at_gate and at_gate[-1].conclusion == "action_required"
    assert figure in (at_gate[-1].text or "")
    with httpx.Client(base_url=world.url, trust_env=False) as client:  # the task center
        client.post("/login", data={"token": TOKEN, "next": "/jobs"})
        page = client.get(f"/jobs/{job.id}").text
    assert "changed lines run by the tests: 1 of 61 (1%), below" in page

    world.comment("/stepwise approve", by="maria", on=2)
    world.work()
    job = world.job(2)
    assert job.status is JobStatus.COMPLETED, (job.status, job.gate)
    runs = world.gh.repos[REPO].ci.runs.values()
    batch_run = next(r for r in runs if r.name == "Stepwise / batch 1")
    assert figure in (batch_run.summary or "")
    uncovered = [a for a in batch_run.annotations if a.title == "changed line not run by the tests"]
    assert len(uncovered) == ORPHAN_LINES  # more than 50: sent in further updates
    assert {a.path for a in uncovered} == {"pkg/orphan.py"}
    final = next(r for r in sorted(runs, key=lambda r: r.id, reverse=True)
                 if r.name == "Stepwise" and r.head_sha == job.head_sha)
    assert f"{figure}, over the whole job" in (final.summary or "")
    pull = world.gh.pull_for(world.repo, job.branch)
    assert pull is not None and figure in (pull.body or "")
    note = world.gh.read_file(world.repo, job.note_path, ref=job.branch) or ""
    assert "## Evidence" in note and figure in note
    assert "forecast against actual: validation runs 1 expected, 2 run" in note
