"""Server mode: a labelled issue without a ```stepwise block gets a drafted spec as a comment,
and nothing runs until a maintainer approves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo.scripted_llm import ScriptedServer
from jobs.kernel.model import Gate, JobStatus
from tests.bot.conftest import REPO, open_world
from tests.jobs.recipes.llm.test_draft import spec_reply
from tests.kit.llm import API_KEY, MODEL
from tests.kit.local_e2e import config_text, sample_files

FREE_TEXT = "old_sum() warns on every call. Please move the callers in calc/alpha to new_sum()."


def test_a_labelled_issue_without_a_block_gets_a_draft_to_approve(
    tmp_path: Path, redis_url: str, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STEPWISE_LLM_BASE_URL", server.url)
    monkeypatch.setenv("STEPWISE_LLM_MODEL", MODEL)
    monkeypatch.setenv("STEPWISE_LLM_API_KEY", API_KEY)
    server.add(spec_reply())
    files = sample_files(config=config_text(llm_drafts=True, require_plan_approval=False))
    with open_world(tmp_path, redis_url, files=files) as world:
        number = world.gh.add_issue(REPO, "Use new_sum()", FREE_TEXT, user="maria")
        world.send("issues.labeled", issue_number=number, sender="maria")
        world.work()
        job = world.job(number)
        assert job.untrusted_spec
        assert job.status is JobStatus.AWAITING_HUMAN and job.gate.kind is Gate.PLAN
        drafts = [b for b in world.bodies(number) if "/stepwise approve" in b and "```stepwise" in b]
        assert drafts and 'calc/alpha/*.py' in drafts[0]
        assert API_KEY not in "\n".join(world.bodies(number))
        assert world.gh.pull_for(world.repo, job.branch) is None  # nothing ran
