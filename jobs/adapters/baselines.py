"""Recorded baseline results, so a job whose base tree, validation and environment are those
of an earlier passing baseline reuses its result instead of running the whole suite again.

One JSON file per key under `<state_dir>/baselines/`: the key is a digest of everything the
result depends on (jobs/engine/baseline.py's `baseline_key`: the base tree, the setup and
validation commands, `env`, `allow_commands`, the timeout, the network mode, the variables
Stepwise adds and the environment's key). Only passing baselines are recorded: a failing one is
always run again (the cause may be outside the key, like a program missing from PATH).
Files are written by temp file and rename; an unreadable one counts as absent.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from pydantic import Field, ValidationError

from jobs.kernel.records import CommandEvidence, Record

_KEY = re.compile(r"[0-9a-f]{16,64}")


class RecordedBaseline(Record):
    """A passing baseline: which job ran it, on which commit, and its evidence."""

    job: str
    commit: str
    evidence: list[CommandEvidence] = Field(default_factory=list)


class BaselineStore:
    """The recorded baselines of one repository (or local checkout)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a baseline key: {key!r}")
        return self.root / f"{key}.json"

    def get(self, key: str) -> RecordedBaseline | None:
        try:
            return RecordedBaseline.model_validate_json(self._path(key).read_text())
        except (OSError, ValueError, ValidationError):
            return None

    def put(self, key: str, baseline: RecordedBaseline) -> None:
        path = self._path(key)
        self.root.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(baseline.model_dump(mode="json"), indent=1))
        os.replace(partial, path)
