"""Recorded baseline results, so a job whose base tree, validation and environment are those
of an earlier passing baseline reuses its result instead of running the whole suite again.

One JSON file per key under `<state_dir>/baselines/`: the key is a digest of everything the
result depends on (jobs/engine/baseline.py's `baseline_key`: the base tree, the setup and
validation commands, `env`, `allow_commands`, the timeout, the network mode, the variables
Stepwise adds, the environment's key, and what the commands resolve to here:
`command_identity`). Only passing baselines are recorded: a failing one is always run again
(the cause may be outside the key). A batch that fails the way a changed environment does
after a reused baseline drops it (`forget`), so no later job reuses it.
Files are written by temp file and rename; an unreadable one counts as absent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field, ValidationError

from jobs.adapters import sandbox_view as view
from jobs.inputs.sandboxing import SandboxPolicy
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

    def forget_matching(self, source: str) -> int:
        """Drop every recorded baseline `source` names (`issue-N/abc1234`, as a job shows
        where its baseline came from); how many were dropped."""
        dropped = 0
        for path in sorted(self.root.glob("*.json")) if self.root.is_dir() else []:
            recorded = self.get(path.stem)
            if recorded is not None and f"{recorded.job}/{recorded.commit[:7]}" == source:
                path.unlink(missing_ok=True)
                dropped += 1
        return dropped


def _prefix(found: Path) -> str:
    """The Python prefix a program runs in: the virtualenv holding it (its pyvenv.cfg), else
    for an interpreter the installation it belongs to; "" for anything else."""
    if (found.parent.parent / "pyvenv.cfg").is_file():
        return str(found.parent.parent)
    real = found.resolve()
    return str(real.parent.parent) if real.name.startswith("python") else ""


def command_identity(argvs: Sequence[Sequence[str]], *, cwd: Path,
                     policy: SandboxPolicy) -> dict[str, object]:
    """What the commands resolve to where Stepwise runs: each program's path on PATH, its real
    path (through links) and its Python prefix, and the variables the commands get besides
    Stepwise's fixed ones (PATH, the trust store, `env`). Another virtualenv activated, a tool
    upgraded in place behind a link, another PATH: another identity, so the baseline runs
    again. A program inside the worktree (what `setup` built) is named relative to it, so the
    identity does not change with the job's worktree."""
    path_value = os.environ.get("PATH") or os.defpath
    search = view.lookup_path(path_value, cwd=cwd, environment=policy.environment)
    programs: dict[str, list[str]] = {}
    for argv in argvs:
        if not argv or argv[0] in programs:
            continue
        found = shutil.which(argv[0], path=search)
        if found is None:
            programs[argv[0]] = []
            continue
        where = Path(found)
        if where.is_relative_to(cwd):
            programs[argv[0]] = [str(where.relative_to(cwd))]
            continue
        programs[argv[0]] = [found, str(where.resolve()), _prefix(where)]
    variables = {"PATH": path_value, **view.trust_environment(), **policy.env}
    return {"programs": programs, "variables": dict(sorted(variables.items()))}
