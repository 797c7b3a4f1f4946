"""The sandbox's view through the real CLI (issue 41.4): a validation tool in a PATH folder under
the system temp directory, whose `node_modules/.bin` entry links into its package, runs in
bubblewrap and the job completes; an `env` naming the temp directory itself is refused at the
plan gate, naming the variable, the place and the rule."""

from __future__ import annotations

import os
from pathlib import Path

from tests.jobs.adapters.sandbox_kit import needs_bwrap, node_tools
from tests.kit.local_e2e import VALIDATE, build_sample, cli, config_text, load_job, show, write_issue

pytestmark = needs_bwrap


def test_a_linked_tool_under_the_temp_directory_validates_every_batch(tmp_path: Path) -> None:
    assert tmp_path.is_relative_to("/tmp")  # what the sandbox's private /tmp hides
    tools = node_tools(tmp_path / "tools", "checker", "2 rules checked")
    config = config_text(validate=[VALIDATE, "checker"], allow_commands=["python", "checker"])
    repo = build_sample(tmp_path / "repo", config=config)
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"
    done = cli("run", "--repo", repo, "--issue", write_issue(tmp_path / "issue.md"), "--yes", "--number", "7",
               env={"PATH": path})
    assert done.code == 0, done.text
    job = load_job(repo)
    assert [c.exit_code for c in job.baseline] == [0, 0]
    assert job.baseline[1].output_tail == "2 rules checked"
    note = show(repo, job.branch, job.note_path)
    assert f"`{VALIDATE}` → exit 0; `checker` → exit 0" in note, note
    assert "Sandbox: bubblewrap" in note


def test_env_naming_the_temp_directory_itself_is_refused_at_the_plan_gate(tmp_path: Path) -> None:
    config = config_text(env={"SCRATCH": "/tmp"})
    repo = build_sample(tmp_path / "repo", config=config)
    done = cli("run", "--repo", repo, "--issue", write_issue(tmp_path / "issue.md"), "--number", "7")
    assert done.code == 3, done.text
    said = ("`env` SCRATCH names /tmp, which the sandbox cannot show: /tmp itself is never shown "
            "(the sandbox's /tmp is a private, empty one); name a folder of its own under it "
            "instead")
    assert said in done.out.splitlines() or said in done.out, done.out
    job = load_job(repo)
    assert job.baseline[0].exit_code == 127 and job.baseline[0].output_tail == said
