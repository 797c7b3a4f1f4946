"""The llm agent's record, piece by piece (issue 41.7): what the model said of each file, read
from `finish{summary}` in the forms models write it, and the check commands told back to the
model with their exit codes and a capped output tail. End to end: tests/bot/test_app_llm_record.py."""

from __future__ import annotations

import pytest

from jobs.kernel.records import CommandEvidence
from jobs.recipes.llm.feedback import TAIL_CHARS, commands_ran, output_tail
from jobs.recipes.llm.summaries import NO_SUMMARY, file_summaries, read_finish_summary

FILES = ("src/a.py", "src/a.py.orig", "src/b.py")


@pytest.mark.parametrize("line", [
    "src/a.py: uses the logger", "`src/a.py`: uses the logger", "- `src/a.py` — uses the logger",
    "* **src/a.py** - uses the logger", "1. src/a.py – uses the logger",
    "SUMMARY src/a.py: uses the logger", "- **`src/a.py`** => uses the logger",
])
def test_each_form_of_a_files_line_is_read(line: str) -> None:
    read = read_finish_summary(f"{line}\nsrc/b.py: drops print()", FILES)
    assert read.per_file == {"src/a.py": "uses the logger", "src/b.py": "drops print()"}
    assert read.general == ""


def test_the_longest_path_wins_and_words_naming_no_file_are_kept() -> None:
    read = read_finish_summary("Both files now log.\nsrc/a.py.orig: untouched backup\n"
                               "src/a.py:\n\nsrc/b.py", FILES)
    assert read.per_file == {"src/a.py.orig": "untouched backup"}
    assert read.general == "Both files now log. src/a.py: src/b.py"


def test_each_changed_file_gets_its_line_else_its_reason_else_the_batch_words() -> None:
    reasons = {"src/a.py": "print is banned", "src/b.py": "", "src/c.py": ""}
    said = file_summaries("src/b.py: logger\nMoved to logging.", ("src/a.py", "src/b.py",
                                                                   "src/c.py"), reasons)
    assert said == {"src/a.py": "print is banned", "src/b.py": "logger",
                    "src/c.py": "Moved to logging."}
    assert file_summaries("", ("src/a.py",), {"src/a.py": ""}) == {"src/a.py": NO_SUMMARY}
    long = file_summaries("src/a.py: " + "x" * 500, ("src/a.py",), {"src/a.py": ""})
    assert len(long["src/a.py"]) == 300 and long["src/a.py"].endswith("…")


def evidence(argv: list[str], code: int, tail: str = "") -> CommandEvidence:
    return CommandEvidence(argv=argv, exit_code=code, duration_s=0.1, output_tail=tail)


def test_the_commands_are_told_with_their_exit_codes_and_what_a_failure_left_unrun() -> None:
    pytest_run, ruff = evidence(["pytest", "-q"], 1), evidence(["ruff", "check", "."], 0)
    planned = ["pytest -q", "ruff check .", "mypy"]
    assert commands_ran([ruff, pytest_run], pytest_run, kind="validation_failed",
                        planned=planned) == \
        "`ruff check .` exited 0; `pytest -q` exited 1; not run after that failure: `mypy`"
    assert commands_ran([ruff], None, kind="validated", planned=["ruff check ."]) == \
        "`ruff check .` exited 0"
    setup = evidence(["pip", "install", "-e", "."], 2)
    assert commands_ran([], setup, kind="setup_failed", planned=planned) == \
        "setup `pip install -e .` exited 2, so no validation command ran"
    assert commands_ran([], None, kind="validated", planned=[]) == \
        "no validation command is configured (`validate` is empty)"


def test_a_failed_commands_tail_is_capped_in_lines_and_characters() -> None:
    lines = [f"line {n} " + "y" * 200 for n in range(100)]
    tail = output_tail(evidence(["pytest"], 1, "\n".join(lines)))
    assert tail.startswith("[… ") and "characters left out]\n" in tail
    assert len(tail.split("]\n", 1)[1]) == TAIL_CHARS and tail.endswith(lines[-1])
    assert output_tail(evidence(["pytest"], 1, "a\nb\n")) == "a\nb"
