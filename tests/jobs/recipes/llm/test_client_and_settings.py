"""Settings, the client's error mapping, transcripts' expiry and the editor's guard rails."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.basics.errors import BadInputError, RetryClass
from jobs.basics.redact import redact
from jobs.kernel.records import ModelCall
from jobs.recipes.base import EditError, EditRequest
from jobs.recipes.llm.accounting import Transcript, prune
from jobs.recipes.llm.client import ModelError, OpenAIChat
from jobs.recipes.llm.editor import LlmEditor
from jobs.recipes.llm_settings import LlmSettings, load_llm_settings
from tests.kit.llm import API_KEY, llm_issue, settings


def test_settings_come_from_the_environment_and_name_what_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEPWISE_LLM_MODEL", "qwen2.5-coder")
    monkeypatch.setenv("STEPWISE_LLM_TOKEN_BUDGET", "5000")
    monkeypatch.setenv("STEPWISE_LLM_API_KEY", API_KEY)
    monkeypatch.delenv("STEPWISE_LLM_BASE_URL", raising=False)
    loaded = load_llm_settings()
    assert (loaded.model, loaded.token_budget, loaded.configured) == ("qwen2.5-coder", 5000, False)
    assert API_KEY not in repr(loaded) and API_KEY not in str(loaded.model_dump())
    with pytest.raises(BadInputError, match="STEPWISE_LLM_BASE_URL not set"):
        loaded.require()
    assert redact(f"key={API_KEY}") == "key=[redacted]"  # registered as a secret when loaded
    explicit = load_llm_settings(base_url="http://127.0.0.1:11434/v1", model=None)
    assert explicit.configured and explicit.model == "qwen2.5-coder"
    monkeypatch.setenv("STEPWISE_LLM_TIMEOUT_S", "soon")
    with pytest.raises(BadInputError, match="STEPWISE_LLM_TIMEOUT_S"):
        load_llm_settings()


@pytest.mark.parametrize(("status", "code", "retry"), [
    (401, "llm_auth_failed", RetryClass.NEEDS_HUMAN),
    (404, "llm_model_not_found", RetryClass.NEEDS_HUMAN),
    (429, "llm_unavailable", RetryClass.AUTO_RETRY),
    (400, "llm_request_refused", RetryClass.NEEDS_HUMAN),
])
def test_server_errors_become_coded_model_errors(server: ScriptedServer, status: int, code: str,
                                                 retry: RetryClass) -> None:
    server.add(Reply(f"nope {API_KEY}", status=status))
    with pytest.raises(ModelError) as raised:
        OpenAIChat(settings(server)).complete([{"role": "user", "content": "x"}], max_tokens=5)
    assert (raised.value.code, raised.value.retry_class) == (code, retry)
    assert API_KEY not in raised.value.message


def test_an_unreachable_server_is_a_transient_fault() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = LlmSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0,
                              timeout_s=5)
    with pytest.raises(ModelError) as raised:
        OpenAIChat(unreachable).complete([{"role": "user", "content": "x"}], max_tokens=5)
    assert raised.value.code == "llm_unreachable"
    assert raised.value.retry_class is RetryClass.AUTO_RETRY


def test_transcripts_are_redacted_and_expire_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "artifacts"
    old = root / "issue-1" / "batch-1-attempt-1.md"
    old.parent.mkdir(parents=True)
    old.write_text("old")
    os.utime(old, (time.time() - 20 * 86400,) * 2)
    path = root / "issue-2" / "batch-1-attempt-1.md"
    transcript = Transcript(path, title="t", secrets=[API_KEY], ttl_days=14)
    call = ModelCall(model="m", files=["a.py"], tokens_in=5, tokens_out=2, outcome="validated")
    transcript.add(call, [{"role": "user", "content": f"key {API_KEY}"}], "```diff\n```")
    text = path.read_text()
    assert API_KEY not in text and "key [redacted]" in text and "outcome **validated**" in text
    assert not old.exists()
    assert prune(root, older_than_days=14) == 0


def test_the_llm_editor_needs_the_runner_hooks(tmp_path: Path) -> None:
    task = llm_issue()
    request = EditRequest(worktree=tmp_path, files=("a.py",), spec=task.spec, goal=task.title)
    with pytest.raises(EditError, match="hooks"):
        LlmEditor(LlmSettings(base_url="http://127.0.0.1:9/v1", model="m")).apply(request)
