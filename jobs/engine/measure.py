"""What a feature measures of a validation run (the evidence feature: the test runner's report):
the `Measurement` protocol a feature's `measure` hook gives for one run of the validation
commands (the baseline's, or an attempt's tree), and several features' measurements as one.

A measurement may change each command's argv (ask the runner for a report), names host folders
the run may write besides the worktree (where the report goes), and is told the evidence once the
commands ended (however they ended). The evidence records each command as the config wrote it,
never the measured argv.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from jobs.kernel.records import CommandEvidence


class Measurement(Protocol):
    """One feature's instruments on one validation run."""

    @property
    def writable(self) -> Sequence[Path]: ...

    def argv(self, index: int, argv: list[str]) -> list[str]:
        """The `index`-th validation command as it runs."""
        ...

    def finish(self, evidence: Sequence[CommandEvidence]) -> None:
        """The run ended (`evidence`: the commands that ran, as recorded)."""
        ...


class Measurements:
    """Several features' measurements of one run: argvs changed in turn, folders joined, each
    told the end."""

    def __init__(self, parts: Sequence[Measurement]) -> None:
        self.parts = list(parts)

    @property
    def writable(self) -> Sequence[Path]:
        return [path for part in self.parts for path in part.writable]

    def argv(self, index: int, argv: list[str]) -> list[str]:
        for part in self.parts:
            argv = part.argv(index, argv)
        return argv

    def finish(self, evidence: Sequence[CommandEvidence]) -> None:
        for part in self.parts:
            part.finish(evidence)


def combine(parts: Sequence[Measurement]) -> Measurement | None:
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Measurements(parts)
