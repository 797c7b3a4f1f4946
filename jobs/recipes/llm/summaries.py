"""What the model said of each file it changed. The tool loop's `finish{summary}` is read per
file: each batch file's own line, in the forms models write it (`path: text`, `` `path` — text
``, `- **path** - text`, `SUMMARY path: text`), and the words that name no file (used for a
changed file the model said nothing of). Untrusted text: the change note renders it escaped,
with no live link."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

LIMIT = 300  # characters kept of one file's summary
NO_SUMMARY = "changed by the model (it gave no summary for this file)"
_LEAD = re.compile(r"^\s*(?:[-*+•]\s+|\d+[.)]\s+)?(?:SUMMARY\s+)?")
_SEPARATOR = re.compile(r"^\s*(?::|—|–|-{1,2}|=>|->)\s*")


@dataclass(frozen=True)
class FinishSummary:
    per_file: dict[str, str]  # a batch file -> the model's line about it
    general: str  # the words that name no file, joined (may be "")


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"


def _after_path(line: str, path: str) -> str | None:
    """What `line` says of `path` when it starts with the path (bare, in backticks or bold)
    followed by a separator; None when it does not."""
    for form in (f"`{path}`", f"**{path}**", f"**`{path}`**", f"*{path}*", path):
        if line.startswith(form):
            rest = line[len(form):]
            separator = _SEPARATOR.match(rest)
            if separator is not None and rest[separator.end():].strip():
                return rest[separator.end():].strip()
    return None


def read_finish_summary(summary: str, files: Iterable[str]) -> FinishSummary:
    """Split the model's summary into its per-file lines and the rest (longest paths tried
    first, so `a/b.py` is not read as `a/b.py.orig`'s line)."""
    paths = sorted(set(files), key=len, reverse=True)
    per_file: dict[str, str] = {}
    general: list[str] = []
    for raw in summary.splitlines():
        line = _LEAD.sub("", raw, count=1).strip()
        if not line:
            continue
        said = next(((path, text) for path in paths
                     if (text := _after_path(line, path)) is not None), None)
        if said is None:
            general.append(line)
        else:
            path, text = said
            per_file[path] = _shorten(f"{per_file[path]}; {text}" if path in per_file else text)
    return FinishSummary(per_file=per_file, general=_shorten(" ".join(general)))


def file_summaries(summary: str, files: Iterable[str],
                   reasons: Mapping[str, str]) -> dict[str, str]:
    """Each changed file (`reasons`: the files the model edited, with its edits' reasons) with
    what the model said of it: its own line of the summary, else its edit's reason, else the
    summary's words that name no file, else that it gave none."""
    read = read_finish_summary(summary, files)
    return {path: read.per_file.get(path) or _shorten(reason) or read.general or NO_SUMMARY
            for path, reason in reasons.items()}
