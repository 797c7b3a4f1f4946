"""Helpers for the llm tests: the scripted server, settings with a marked key, diffs and answers."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
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
# The issue's spec for the llm recipe on ALPHA's folder (a test overrides what it is about).
LLM_SPEC: dict[str, Any] = {"recipe": "llm", "replace": None, "instructions": INSTRUCTIONS,
                            "paths": ["calc/alpha/*.py"]}


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
    return parse_issue_file(issue_markdown(**{**LLM_SPEC, **spec}))


def llm_issue_text(**spec: Any) -> str:
    """The body of an llm issue (its spec block; the title line cut) for the fake GitHub."""
    return issue_markdown(**{**LLM_SPEC, **spec}).split("\n", 1)[1]


def serve_model(monkeypatch: pytest.MonkeyPatch, model: ScriptedServer, **settings: str) -> None:
    """The server's STEPWISE_LLM_* settings for the scripted model `model` (its URL, MODEL and
    API_KEY, then `settings`: EDIT_FORMAT="tools", ...)."""
    for name, value in {"BASE_URL": model.url, "MODEL": MODEL, "API_KEY": API_KEY,
                        **settings}.items():
        monkeypatch.setenv(f"STEPWISE_LLM_{name}", value)


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


# --- a pytest repository whose tests a scripted model weakens (issue 39) ----------------------
RECT = "rect.py"
RECT_TESTS = "tests/test_rect.py"
PYTEST_INI = "pytest.ini"
RECT_SOURCE = '''"""Rectangles."""


def area(width, height):
    return width * height


def perimeter(width, height):
    return 2 * (width + height)
'''
RECT_HINTED = RECT_SOURCE.replace("(width, height):", "(width: int, height: int) -> int:")
RECT_TEST_SOURCE = '''import pytest

from rect import area, perimeter


def test_area():
    assert area(2, 3) == 6
    assert area(0, 5) == 0


def test_perimeter():
    assert perimeter(2, 3) == 10
'''
SWALLOWED = '''def test_area():
    try:
        assert area(2, 3) == 6
        assert area(0, 5) == 0
    except AssertionError:
        pass
'''
_AREA = RECT_TEST_SOURCE[RECT_TEST_SOURCE.index("def test_area"):RECT_TEST_SOURCE.index("\n\n\ndef test_p")]
# Each way an editor weakens the tests to get green: the files it writes (None: deleted).
WEAKENINGS: dict[str, dict[str, str | None]] = {
    "delete_assert": {RECT_TESTS: RECT_TEST_SOURCE.replace("    assert area(0, 5) == 0\n", "")},
    "skip": {RECT_TESTS: RECT_TEST_SOURCE.replace(
        "def test_area", "@pytest.mark.skip(reason=\"slow\")\ndef test_area")},
    "xfail": {RECT_TESTS: RECT_TEST_SOURCE.replace(
        "def test_perimeter", "@pytest.mark.xfail\ndef test_perimeter")},
    "expected_value": {RECT: RECT_HINTED.replace("return width * height",
                                                 "return width * height + width // 2"),
                       RECT_TESTS: RECT_TEST_SOURCE.replace("== 6", "== 7")},
    "delete_test": {RECT_TESTS: RECT_TEST_SOURCE[:RECT_TEST_SOURCE.index("\n\ndef test_per")]},
    "swallow": {RECT_TESTS: RECT_TEST_SOURCE.replace(_AREA, SWALLOWED.rstrip("\n"))},
    "deselect_config": {PYTEST_INI: "[pytest]\naddopts = -q --deselect "
                                    "tests/test_rect.py::test_perimeter\n"},
    "delete_file": {RECT_TESTS: None},
    "rename": {RECT_TESTS: RECT_TEST_SOURCE.replace("def test_perimeter", "def check_perimeter")},
    "deselect_k": {PYTEST_INI: "[pytest]\naddopts = -q -k 'not perimeter'\n"},
    "testpaths": {PYTEST_INI: "[pytest]\naddopts = -q\ntestpaths = tests/test_square.py\n"},
}


def rect_files(*, config: str) -> dict[str, str | bytes]:
    return {"README.md": "# rect\n", ".github/stepwise.yml": config, RECT: RECT_SOURCE,
            "tests/__init__.py": "", RECT_TESTS: RECT_TEST_SOURCE, PYTEST_INI: "[pytest]\naddopts = -q\n",
            "tests/test_square.py": "from rect import perimeter\n\n\ndef test_square():\n"
                                    "    assert perimeter(3, 3) == 12\n"}


def edit_diff(repo: Path, files: Mapping[str, str | None]) -> str:
    """A unified diff writing `files` (None: deleting the file) over the repository's HEAD."""
    parts = []
    for path, new in files.items():
        old = head_text(repo, path)
        if new is None:
            parts.append(unified(path, old, "").replace(f"+++ b/{path}", "+++ /dev/null", 1))
        else:
            parts.append(unified(path, old, new))
    return "".join(parts)


def weakening_reply(repo: Path, way: str) -> Reply:
    """The model's answer: type hints on rect.py, and the tests weakened in `way`."""
    files: dict[str, str | None] = {RECT: RECT_HINTED, **WEAKENINGS[way]}
    return Reply(answer(edit_diff(repo, files), {RECT: "adds type hints"}))


def honest_reply(repo: Path) -> Reply:
    return Reply(answer(edit_diff(repo, {RECT: RECT_HINTED}), {RECT: "adds type hints"}))
