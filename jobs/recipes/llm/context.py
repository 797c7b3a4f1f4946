"""The request for one batch (or one file of it): goal, rules, targets and numbered files, never cut silently.

A file too large for the context budget is shown as windows around its targets, and the request
lists every line range it left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jobs.basics.errors import StepwiseError
from jobs.inputs.spec import TaskSpec
from jobs.kernel.records import Target
from jobs.recipes.llm.client import Message

CHARS_PER_TOKEN = 4
WINDOW_RADII = (40, 20, 10, 5)  # lines either side of a target, tried in turn
MAX_LISTED_TARGETS = 200
Range = tuple[int, int]

RULES = """Rules:
- Change only the files of this batch: {files}. Do not create, delete or rename files.
- Do not edit tests to make them pass; do not weaken, skip or delete checks.
- Do not add dependencies; do not touch dependency manifests or lock files.
- Do not touch secrets, credentials or CI configuration.
- Do only what the goal and the instructions ask, and nothing on the "not doing" list."""

ANSWER_FORMAT = """Answer format: one ```diff block holding the whole change as a unified diff, then
one SUMMARY line per changed file, like this:

```diff
--- a/pkg/module.py
+++ b/pkg/module.py
@@ -12,3 +12,3 @@
 a context line, copied exactly
-the old line
+the new line
```
SUMMARY pkg/module.py: what changed in this file, in one line

- `@@ -start,count +start,count @@`: the counts must match the hunk's lines.
- Copy context and removed lines exactly, without the line numbers shown to you (the
  `   12| ` prefixes are for reference only).
- Keep up to 3 lines of context around each change."""

SYSTEM = """You are the editing step of Stepwise, which makes one maintenance change across a
repository in small batches. You propose the edit; Stepwise parses it, applies it, checks
it against its diff guard and runs the repository's validation commands,
and tells you exactly what failed.

{rules}

{answer}"""


class ContextTooLargeError(StepwiseError):
    """The files of a request do not fit the context budget, even as windows."""

    code = "llm_context_too_large"


@dataclass(frozen=True)
class FileView:
    path: str
    lines: int
    omitted: tuple[Range, ...]
    text: str


@dataclass(frozen=True)
class Prompt:
    messages: list[Message]
    views: tuple[FileView, ...]

    @property
    def omitted(self) -> dict[str, tuple[Range, ...]]:
        return {view.path: view.omitted for view in self.views if view.omitted}


def windows(lines: Sequence[int], total: int, radius: int) -> list[Range]:
    """Merged 1-based inclusive ranges of `radius` lines around each target line."""
    merged: list[Range] = []
    for line in sorted(set(lines)):
        start, end = max(1, line - radius), min(total, line + radius)
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def gaps(shown: Sequence[Range], total: int) -> tuple[Range, ...]:
    """The ranges of 1..total not covered by `shown` (sorted, disjoint)."""
    out: list[Range] = []
    nxt = 1
    for start, end in shown:
        if start > nxt:
            out.append((nxt, start - 1))
        nxt = end + 1
    if nxt <= total:
        out.append((nxt, total))
    return tuple(out)


def range_label(ranges: Sequence[Range]) -> str:
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in ranges)


def render_file(path: str, text: str | None, shown: Sequence[Range] | None) -> FileView:
    """`path` with numbered lines, whole (`shown` None) or as windows with omission markers."""
    if text is None:
        return FileView(path, 0, (), f"## {path}: not shown (binary or not UTF-8); do not change it\n")
    lines = text.splitlines()
    total = len(lines)
    if shown is None:
        body = [f"{n:>5}| {line}" for n, line in enumerate(lines, 1)]
        return FileView(path, total, (), f"## {path} ({total} lines, whole file)\n" + "\n".join(body) + "\n")
    omitted = gaps(shown, total)
    marks = {start: f"[lines {start}–{end} not shown]" if start != end else f"[line {start} not shown]"
             for start, end in omitted}
    body = []
    for start, end in sorted([*shown, *omitted]):
        body.append(marks[start] if start in marks else
                    "\n".join(f"{n:>5}| {lines[n - 1]}" for n in range(start, end + 1)))
    head = (f"## {path} ({total} lines; shown as windows around its targets, lines "
            f"{range_label(omitted)} left out)")
    return FileView(path, total, omitted, head + "\n" + "\n".join(body) + "\n")


def fit_files(texts: Mapping[str, str | None], targets: Mapping[str, Sequence[int]],
              budget_chars: int) -> list[FileView]:
    """Whole files if they fit `budget_chars`; else the largest ones as ever narrower windows."""
    radius: dict[str, int] = {}  # index into WINDOW_RADII, for windowed files

    def view(path: str) -> FileView:
        text = texts[path]
        if path not in radius or text is None:
            return render_file(path, text, None)
        total = len(text.splitlines())
        return render_file(path, text, windows(targets[path], total, WINDOW_RADII[radius[path]]))

    while True:
        views = [view(path) for path in texts]
        size = sum(len(v.text) for v in views)
        if size <= budget_chars:
            return views
        by_size = sorted(views, key=lambda v: len(v.text), reverse=True)
        whole = [v for v in by_size if v.path not in radius and targets.get(v.path)
                 and texts[v.path] is not None]
        narrower = [v for v in by_size if v.path in radius and radius[v.path] < len(WINDOW_RADII) - 1]
        if whole:
            radius[whole[0].path] = 0
        elif narrower:
            radius[narrower[0].path] += 1
        else:
            biggest = by_size[0]
            raise ContextTooLargeError(
                f"the request's files take {size // CHARS_PER_TOKEN} tokens, more than the "
                f"{budget_chars // CHARS_PER_TOKEN} allowed, even with {biggest.path} "
                f"({biggest.lines} lines) cut to windows where it has targets",
                hint="lower `batch_size`, add `find` patterns so large files can be sent as "
                     "windows, or raise STEPWISE_LLM_CONTEXT_TOKENS",
                evidence={"tokens": size // CHARS_PER_TOKEN, "file": biggest.path},
            )


def _section(title: str, items: Sequence[str], empty: str) -> str:
    body = "\n".join(f"- {item}" for item in items) if items else empty
    return f"# {title}\n{body}"


def build_prompt(*, goal: str, spec: TaskSpec, standing: Sequence[str], batch_files: Sequence[str],
                 files: Sequence[str], texts: Mapping[str, str | None], targets: Sequence[Target],
                 context_tokens: int, feedback: str | None = None,
                 answer_format: str = ANSWER_FORMAT) -> Prompt:
    """The messages of the first round for `files` (all of the batch, or one file of it)."""
    wanted = [t for t in targets if t.path in files]
    per_file: dict[str, list[int]] = {path: [] for path in files}
    for target in wanted:
        per_file[target.path].append(target.line)
    views = fit_files({path: texts.get(path) for path in files}, per_file,
                      context_tokens * CHARS_PER_TOKEN)
    system = SYSTEM.format(rules=RULES.format(files=", ".join(files)), answer=answer_format)
    scope = f"Batch files: {', '.join(batch_files)}"
    if list(files) != list(batch_files):
        scope += (f"\nThis request covers only: {', '.join(files)} (the batch's other files are "
                  "asked for separately; do not change them here)")
    listed = []
    for target in wanted[:MAX_LISTED_TARGETS]:
        line = (texts.get(target.path) or "").splitlines()[target.line - 1:target.line]
        listed.append(f"{target}: `{line[0].strip()[:200]}`" if line else str(target))
    if len(wanted) > MAX_LISTED_TARGETS:
        listed.append(f"… and {len(wanted) - MAX_LISTED_TARGETS} more targets, each marked in "
                      "the files below by the job's `find` patterns")
    find = ", ".join(f"`{p}`" for p in spec.find)
    left_out = [f"{v.path}: lines {range_label(v.omitted)} (of {v.lines}); not shown, do not "
                f"change them" for v in views if v.omitted]
    parts = [
        f"# Goal\n{goal}",
        f"# Instructions\n{(spec.instructions or '').strip() or '(none beyond the goal)'}",
        _section("Standing instructions from the maintainers", list(standing), "(none)"),
        _section("Not doing", spec.not_doing, "(nothing listed)"),
        f"# This request\n{scope}",
        _section(f"Targets (lines matching {find})" if find else "Targets", listed,
                 "(no `find` patterns: change what the instructions ask for)"),
        _section("Left out of this request", left_out, "(nothing: every file is shown whole)"),
        "# Files\n" + "\n".join(v.text for v in views),
    ]
    if feedback:
        parts.append(f"# Why the previous attempt at this batch failed\n{feedback}")
    user = "\n\n".join(parts)
    return Prompt([{"role": "system", "content": system}, {"role": "user", "content": user}],
                  tuple(views))
