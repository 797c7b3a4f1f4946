"""`stepwise demo --llm-scripted`: an llm job on the sample, against a scripted model on loopback.

The scripted model makes the mistakes real models make, so the feedback loop can be watched:
batch 1 sends a diff with a wrong hunk count, then one whose context does not match the file,
then a good one; batch 2 edits a test (refused by the guard), then breaks validation, then
gets it right; batch 3's first answer is cut off at the output limit, so each file is asked for
on its own.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.demo.scripted_llm import Reply, ScriptedServer
from jobs.adapters.workspace import run_git
from jobs.recipes.llm_settings import LlmSettings

FIND = r"\bmoney\.as_text\("
ISSUE = """# Replace the deprecated money.as_text() with money.format_amount()

`money.as_text()` has been deprecated since 2.0 and warns on every call. Move every caller
to `money.format_amount()`, which takes the same argument and returns the same text.

```stepwise
recipe: llm
paths: ["shelf/**/*.py"]
exclude: ["shelf/money.py"]
find: ['\\bmoney\\.as_text\\(']
instructions: |
  Call money.format_amount() where the code calls the deprecated money.as_text();
  the argument and the result stay the same.
not_doing:
  - "remove as_text() itself (a later release does that)"
  - "reformat or refactor the callers"
```
"""
TEST_FILE = "tests/test_shelf.py"
_SCOPE = re.compile(r"^Batch files: (.+)$", re.MULTILINE)
_ONLY = re.compile(r"^This request covers only: (.+?) \(", re.MULTILINE)


def _unified(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


class DemoModel:
    """Answers each request from what it asks for (its batch and files) and how often it asked."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.batches: list[str] = []  # batch keys in the order first seen
        self.asked: dict[tuple[str, str], int] = {}

    def head(self, path: str) -> str:
        return run_git(["show", f"HEAD:{path}"], cwd=self.repo, git_dir=self.repo / ".git")

    def diff(self, files: list[str], new_name: str = "format_amount(") -> str:
        return "".join(_unified(p, self.head(p), re.sub(FIND, f"money.{new_name}", self.head(p)))
                       for p in files)

    def reply(self, diff: str, files: list[str]) -> Reply:
        lines = [f"SUMMARY {p}: calls money.format_amount() instead of the deprecated "
                 "money.as_text()" for p in files]
        return Reply("```diff\n" + diff + "```\n" + "\n".join(lines) + "\n")

    def __call__(self, body: dict[str, Any]) -> Reply:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        scope = _SCOPE.search(user)
        batch = scope[1] if scope else ""
        only = _ONLY.search(user)
        files = (only[1] if only else batch).split(", ")
        if batch not in self.batches:
            self.batches.append(batch)
        key = (batch, ",".join(files))
        self.asked[key] = count = self.asked.get(key, 0) + 1
        number = self.batches.index(batch) + 1
        good = self.diff(files)
        if number == 1 and count == 1:  # a hunk header that miscounts its lines
            return self.reply(re.sub(r"^@@ -(\d+),(\d+)", lambda m: f"@@ -{m[1]},{int(m[2]) + 2}",
                                     good, count=1, flags=re.MULTILINE), files)
        if number == 1 and count == 2:  # a context line that is not in the file
            return self.reply(re.sub(r"^ (\S.*)$", r" \1  # (remembered wrongly)", good, count=1,
                                     flags=re.MULTILINE), files)
        if number == 2 and count == 1:  # "fixing" a test instead of the code
            test = self.head(TEST_FILE)
            return self.reply(good + _unified(TEST_FILE, test, "# adjusted\n" + test), files)
        if number == 2 and count == 2:  # a typo that only validation catches
            return self.reply(self.diff(files, "format_amout("), files)
        if number == 3 and len(files) > 1:  # cut off at the output limit
            return Reply("```diff\n" + good[: len(good) // 2], finish_reason="length")
        return self.reply(good, files)


def demo_settings(server: ScriptedServer) -> LlmSettings:
    """Settings for the scripted model; the key is a stand-in (the demo shows it is never kept)."""
    return LlmSettings(base_url=server.url, model="scripted-demo-model", max_retries=0,
                       edit_format="diff",
                       api_key=SecretStr("demo-key-not-a-real-secret"), timeout_s=30)


def write_issue(target: Path) -> Path:
    path = target / "issue-llm.md"
    path.write_text(ISSUE, encoding="utf-8")
    return path
