"""The `Stepwise config` check run, through signed push webhooks on the fake GitHub: a push
that changes `.github/stepwise.yml` (on a pull request's branch, or the default branch) gets a
run on its head: success when the file is valid, failure with every problem as
`stepwise check-config` prints it and an annotation at each problem's line otherwise; 60
problems go out 50 a request (GitHub's limit) and all arrive."""

from __future__ import annotations

from typing import Any

import httpx

from jobs.inputs.config import CONFIG_PATH
from tests.bot.conftest import REPO, SECRET, World
from tests.kit.webhooks import deliver, make_event

BROKEN = """trigger_label: stepwise
batch_sise: 5
ci:
  wait: sometimes
validate: ["python -m pytest -q"]
"""


def push(world: World, branch: str, files: dict[str, str | None]) -> str:
    """Someone pushes `files` to `branch`; the push webhook says which files it changed."""
    sha = world.gh.push_files(REPO, branch, files, "config change")
    payload: dict[str, Any] = make_event("push", repo=REPO, ref=f"refs/heads/{branch}",
                                         after=sha, sender="maria")
    payload["commits"] = [{**payload["commits"][0], "id": sha, "added": [], "removed": [],
                           "modified": list(files)}]
    with httpx.Client(base_url=world.url, trust_env=False) as client:
        assert deliver(client, "push", payload, secret=SECRET).status_code == 202
    world.work()
    return sha


def config_runs(world: World, sha: str) -> list[Any]:
    return [run for run in world.repo.ci.runs.values()
            if run.name == "Stepwise config" and run.head_sha == sha]


def test_a_broken_config_on_a_branch_fails_its_check_with_annotations(world: World) -> None:
    sha = push(world, "tune-stepwise", {CONFIG_PATH: BROKEN})
    [run] = config_runs(world, sha)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert run.title == f"{CONFIG_PATH}: 2 problems"
    assert "did you mean `batch_size`?" in run.summary and "stepwise check-config" in run.summary
    where = {(a.path, a.start_line, a.annotation_level) for a in run.annotations}
    assert where == {(CONFIG_PATH, 2, "failure"), (CONFIG_PATH, 4, "failure")}
    assert any("did you mean `batch_size`?" in a.message for a in run.annotations)

    fixed = push(world, "tune-stepwise", {CONFIG_PATH: BROKEN.replace("batch_sise", "batch_size")
                                          .replace("sometimes", "per_batch")})
    [run] = config_runs(world, fixed)
    assert (run.conclusion, run.annotations) == ("success", [])


def test_the_default_branch_and_the_annotation_limit(world: World) -> None:
    many = "".join(f"unknown_{n}: 1\n" for n in range(60))
    sha = push(world, "main", {CONFIG_PATH: many})
    [run] = config_runs(world, sha)
    assert run.conclusion == "failure" and len(run.annotations) == 60
    assert sorted(a.start_line for a in run.annotations) == list(range(1, 61))
    creates = world.gh.requests_to("POST", r"/check-runs$")
    assert all(len((r.json or {}).get("output", {}).get("annotations", [])) <= 50
               for r in creates)
    # A push that does not touch the config gets no config run.
    other = push(world, "main", {"README.md": "hello\n"})
    assert config_runs(world, other) == []
