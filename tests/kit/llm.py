"""Helpers for the llm tests: the scripted server, settings with a marked key, diffs and answers."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.inputs.spec import IssueTask, parse_issue_file
from jobs.local import LocalSession
from jobs.recipes.llm_settings import LlmSettings
from tests.kit.local_e2e import NUMBER, Recorder, issue_markdown
from tests.kit.repos import git

API_KEY = "sk-test-NEVER-LOG-7f3a9c1e5b2d8a4f"
MODEL = "scripted-model"
INSTRUCTIONS = "Call legacy.new_sum() instead of the deprecated legacy.old_sum()."
ALPHA = ("calc/alpha/area.py", "calc/alpha/perimeter.py")


def settings(server: ScriptedServer, **overrides: Any) -> LlmSettings:
    values: dict[str, Any] = {"base_url": server.url, "model": MODEL,
                              "api_key": SecretStr(API_KEY), "max_retries": 0, "timeout_s": 20,
                              "edit_format": "diff"}  # the tests script diffs unless they say
    values.update(overrides)
    return LlmSettings(**values)


def llm_session(repo: Path, server: ScriptedServer, sink: Recorder | None = None,
                **overrides: Any) -> LocalSession:
    return LocalSession(repo, NUMBER, sink=sink or Recorder(), llm=settings(server, **overrides))


def llm_issue(**spec: Any) -> IssueTask:
    values: dict[str, Any] = {"recipe": "llm", "replace": None, "instructions": INSTRUCTIONS,
                              "paths": ["calc/alpha/*.py"]}
    values.update(spec)
    return parse_issue_file(issue_markdown(**values))


def head_text(repo: Path, path: str) -> str:
    return git(repo, "show", f"HEAD:{path}") + "\n"


def unified(path: str, old: str, new: str) -> str:
    """A unified diff with git's a/ and b/ prefixes (difflib's, so counts are right)."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(lines)


def fixed(text: str) -> str:
    return text.replace("legacy.old_sum(", "legacy.new_sum(")


def good_diff(repo: Path, files: Iterable[str]) -> str:
    return "".join(unified(p, head_text(repo, p), fixed(head_text(repo, p))) for p in files)


def answer(diff: str, summaries: Mapping[str, str] | None = None, *, close: bool = True) -> str:
    lines = [f"SUMMARY {path}: {text}" for path, text in (summaries or {}).items()]
    fence = "```\n" if close else ""
    return f"Here is the change.\n\n```diff\n{diff}{fence}" + "\n".join(lines) + "\n"


def good_reply(repo: Path, files: Iterable[str] = ALPHA) -> Reply:
    files = list(files)
    return Reply(answer(good_diff(repo, files),
                        {p: "calls legacy.new_sum() instead of old_sum()" for p in files}))
