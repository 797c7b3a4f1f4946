"""The benchmark's scripted model (protocol mode): it knows each task's solution and sends it
in the request's edit format, so a run checks the plumbing, not a model."""

from __future__ import annotations

import json
from typing import Any

from bench.llm_tasks.tasks import Task
from bot.demo.scripted_llm import Reply
from jobs.recipes.llm.formats import unified


def _format(body: dict[str, Any]) -> str:
    if body.get("tools"):
        return "tools"
    system = str(body["messages"][0].get("content") or "")
    if "<<<<<<< SEARCH" in system:
        return "search_replace"
    if "the whole new\nfile" in system:
        return "whole"
    return "diff"


def _summaries(task: Task) -> str:
    return "".join(f"SUMMARY {path}: {task.instructions[:60]}\n" for path in task.batch)


class ScriptedModel:
    """A step for bot.demo.scripted_llm.ScriptedServer: one reply per request."""

    def __init__(self, task: Task) -> None:
        self.task = task

    def __call__(self, body: dict[str, Any]) -> Reply:
        task = self.task
        kind = _format(body)
        if kind == "tools":
            return self.tool_step(body)
        if kind == "search_replace":
            text = "".join(f"{path}\n<<<<<<< SEARCH\n{task.files[path].rstrip(chr(10))}\n"
                           f"=======\n{task.solution[path].rstrip(chr(10))}\n>>>>>>> REPLACE\n\n"
                           for path in task.batch)
        elif kind == "whole":
            text = "".join(f"{path}\n```\n{task.solution[path]}```\n\n" for path in task.batch)
        else:
            diff = "".join(unified(path, task.files[path], task.solution[path])
                           for path in task.batch)
            text = f"```diff\n{diff}```\n"
        return Reply(text + _summaries(task))

    def tool_step(self, body: dict[str, Any]) -> Reply:
        task = self.task
        turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        paths = task.batch
        if turn == 0:
            return _call("read_file", path=paths[0])
        if turn <= len(paths):
            path = paths[turn - 1]
            return _call("edit_file", path=path, old_text=task.files[path],
                         new_text=task.solution[path], reason=task.instructions[:80])
        summary = "\n".join(f"{path}: {task.instructions[:60]}" for path in paths)
        return _call("finish", summary=summary)


def _call(name: str, **arguments: Any) -> Reply:
    json.dumps(arguments)  # must be JSON-serialisable
    return Reply("", tool_calls=((name, arguments),))
