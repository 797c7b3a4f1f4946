"""The first messages of a tool-using attempt, and the restatement sent every N turns."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from jobs.inputs.spec import TaskSpec
from jobs.kernel.records import Target
from jobs.recipes.llm.context import CHARS_PER_TOKEN, ContextTooLargeError, fit_files

SYSTEM = """You are the editing step of Stepwise, which makes one maintenance change across a
repository in small batches. You work with tools: list_files, outline, search and read_file to
look at any tracked file; edit_file and write_file to change the batch's files; run_checks to
run the repository's checks; finish when the batch is done. Stepwise then checks the batch
itself (its diff guard, the validation commands, the targets) and tells you what failed.

Rules:
- Change only the batch's files: {files}. Do not create, delete or rename files.
- Do not edit tests to make them pass; do not weaken, skip or delete checks.
- Do not add dependencies; do not touch manifests, lock files, secrets or CI configuration.
- Do only what the goal and the instructions ask, and nothing on the "not doing" list.
- Read before you edit; copy old_text exactly from the file (never the `   12| ` prefixes).
- Give each edit a one-line `reason`. Call one tool at a time when a result decides the next."""


def _section(title: str, items: Sequence[str], empty: str) -> str:
    return f"# {title}\n" + ("\n".join(f"- {item}" for item in items) if items else empty)


def first_messages(*, goal: str, spec: TaskSpec, standing: Sequence[str], files: Sequence[str],
                   texts: Mapping[str, str | None], targets: Sequence[Target],
                   context_tokens: int, feedback: str | None) -> list[dict[str, str]]:
    per_file: dict[str, list[int]] = {path: [] for path in files}
    for target in targets:
        if target.path in per_file:
            per_file[target.path].append(target.line)
    try:
        views = fit_files({p: texts.get(p) for p in files}, per_file,
                          context_tokens * CHARS_PER_TOKEN)
        shown = "# The batch's files\n" + "\n".join(v.text for v in views)
    except ContextTooLargeError:
        shown = ("# The batch's files\nNot included: they are too large for one message. "
                 "Read them with read_file (use outline first).")
    parts = [
        f"# Goal\n{goal}",
        f"# Instructions\n{(spec.instructions or '').strip() or '(none beyond the goal)'}",
        _section("Standing instructions from the maintainers", list(standing), "(none)"),
        _section("Not doing", list(spec.not_doing), "(nothing listed)"),
        f"# Batch files (the only files you may change)\n{', '.join(files)}",
        _section("Targets", [str(t) for t in targets[:200]],
                 "(no `find` patterns: change what the instructions ask for)"),
        shown,
    ]
    if feedback:
        parts.append(f"# Before this attempt\n{feedback}")
    parts.append("Start by reading what you need; when the change is complete, call finish.")
    return [{"role": "system", "content": SYSTEM.format(files=", ".join(files))},
            {"role": "user", "content": "\n\n".join(parts)}]


def remaining_targets(spec: TaskSpec, texts: Mapping[str, str]) -> list[str]:
    """`path:line` of each `find` match left in the batch's files as they are now."""
    patterns = [re.compile(p) for p in spec.find]
    left: list[str] = []
    for path, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in patterns):
                left.append(f"{path}:{number}: {line.strip()[:160]}")
    return left


def restatement(*, turn: int, goal: str, spec: TaskSpec, files: Sequence[str],
                left: Sequence[str]) -> str:
    targets = (_section("Targets still matching the `find` patterns", list(left[:40]),
                        "(none left)") if spec.find else
               f"# Batch files still to get right\n{', '.join(files)}")
    return "\n\n".join([
        f"# Reminder (turn {turn})\nGoal: {goal}",
        _section("Not doing", list(spec.not_doing), "(nothing listed)"),
        targets,
        "In one sentence before your next tool call: how does it serve the goal?",
    ])
