"""The commit trailers are spelled in jobs/kernel/trailers.py only: a `Stepwise-<Name>` string
anywhere else in jobs/ or bot/ (a literal or a piece of an f-string; docstrings may name them)
is refused, and the names records and branches already carry never change."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from jobs.kernel import trailers
from tests.kit.spelled import spelled_strings

ROOT = Path(__file__).resolve().parents[3]
HOME = ROOT / "jobs" / "kernel" / "trailers.py"
TRAILER = re.compile(r"Stepwise-[A-Z]")


def spelled_trailers(source: str) -> list[str]:
    """The `Stepwise-<Name>` strings `source` spells outside its docstrings."""
    return [text for _, text in spelled_strings(ast.parse(source), docstrings=False)
            if TRAILER.search(text)]


def test_no_module_but_the_trailers_home_spells_a_trailer() -> None:
    spelled = {str(path.relative_to(ROOT)): found
               for top in ("jobs", "bot") for path in sorted((ROOT / top).rglob("*.py"))
               if path != HOME and (found := spelled_trailers(path.read_text(encoding="utf-8")))}
    assert spelled == {}


def test_the_scan_catches_a_literal_and_an_f_string_but_not_a_docstring() -> None:
    source = ('"""Commits end with Stepwise-Job."""\n'
              'NAME = "Stepwise-Job"\n'
              'def message(job):\n    return f"done\\n\\nStepwise-Batch: {job}\\n"\n')
    assert spelled_trailers(source) == ["Stepwise-Job", "done\n\nStepwise-Batch: {}\n"]


def test_the_names_commits_already_carry_never_change() -> None:
    assert (trailers.JOB, trailers.BATCH, trailers.MILESTONE, trailers.SPEC, trailers.NOTE,
            trailers.REVERT, trailers.BASE_MERGE, trailers.SPLIT, trailers.CANDIDATE) == (
        "Stepwise-Job", "Stepwise-Batch", "Stepwise-Milestone", "Stepwise-Spec", "Stepwise-Note",
        "Stepwise-Revert", "Stepwise-Base-Merge", "Stepwise-Split", "Stepwise-Candidate")
    assert trailers.trailer_lines((trailers.JOB, "7-ab"), (trailers.BATCH, 2)) == \
        "Stepwise-Job: 7-ab\nStepwise-Batch: 2\n"
