"""The functions of Stepwise's own modules a piece of work called (a profile hook), to check
that a job which does not use a feature crosses none of its files but its `active` guard."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def crossed() -> Iterator[set[tuple[str, str]]]:
    """The (repository-relative file, function) pairs called while the block runs."""
    seen: set[tuple[str, str]] = set()
    prefix = str(ROOT) + "/"

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(prefix):
            seen.add((frame.f_code.co_filename[len(prefix):], frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def called_under(seen: set[tuple[str, str]], folder: str) -> set[tuple[str, str]]:
    return {(file, name) for file, name in seen if file.startswith(folder)}


def run_crossing(work: Callable[[], Any]) -> tuple[Any, set[tuple[str, str]]]:
    with crossed() as seen:
        result = work()
    return result, seen
