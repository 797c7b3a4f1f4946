"""Benchmark: a split on a real repository with an expensive suite and one culprit (issue 47).

    .venv/bin/python -m bench.dateutil_split

python-dateutil 2.9.0.post0 as PyPI ships it (`pip download --no-binary :all:`; cached under
.cache/dateutil/ with freezegun's sdist, which its suite imports: freezegun is vendored into
the repository) and its whole pytest suite (about 2,000 tests) as the validation. The job
removes three imports their modules do not use, one batch of 3 files: two that ruff's F401
reports (`parser/__init__.py`, `tz/tz.py`) and the re-export `from ._version import version
as __version__` in `dateutil/__init__.py` (F401's kind: unused in its module, and
tests/test_imports.py imports it), which breaks exactly two tests of tests/test_imports.py.
Each import becomes `pass`, so every module still imports.

Configurations, in the same run (local mode, bubblewrap where installed):
- **one run per batch**: the same job without the culprit (the two good files: the baseline
  and one suite run), the floor a split is measured against;
- **halves, whole runs**: the split as it was before issue 47 (every part validated with the
  whole suite);
- **each file alone, whole runs**;
- **chosen**: the plan jobs/features/bisect/strategy.py makes (each file alone, the failing
  tests first, the whole suite once on the files committed; the culprit's own batch on its
  failing tests first).
Each prints its whole-suite runs, its runs on the failing tests only, the split's validations
per culprit, its wall time and the ratio to one run per batch.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench._common import ROOT, machine_facts
from jobs.composition import with_feature
from jobs.features.bisect.record import bisect_of
from jobs.features.bisect.strategy import SplitPlan
from jobs.features.bisect.wiring import bisect_feature
from jobs.features.ci.wiring import CANDIDATES as CI_CANDIDATES
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import BatchStatus
from jobs.local import LocalSession
from tests.kit.bisect_repos import CountingSandbox
from tests.kit.local_e2e import Recorder
from tests.kit.repos import git

CACHE = ROOT / ".cache" / "dateutil"
DATEUTIL = "python-dateutil==2.9.0.post0"
FREEZEGUN = "freezegun==1.5.5"
NUMBER = 47
CULPRIT = "src/dateutil/__init__.py"
GOOD = ["src/dateutil/parser/__init__.py", "src/dateutil/tz/tz.py"]
FIND = [r"^( *)from \._version import version as __version__$",
        r"^()from \._parser import DEFAULTPARSER, DEFAULTTZPARSER$",
        r"^()from warnings import warn$"]
VALIDATE = ("python -m pytest -q -p no:cacheprovider -W ignore::pytest.PytestUnknownMarkWarning "
            "-W ignore::pytest.PytestRemovedIn10Warning tests")


def sdist(requirement: str) -> Path:
    """The sdist of `requirement`, downloaded once with pip into .cache/dateutil/."""
    name = requirement.split("==")[0].replace("-", "_").lower()
    found = [p for p in CACHE.glob("*.tar.gz") if p.name.replace("-", "_").lower()
             .startswith(f"{name}_{requirement.split('==')[1]}")]
    if found:
        return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", requirement, "--no-binary", ":all:",
                    "--no-deps", "-d", str(CACHE)], check=True, capture_output=True)
    return sdist(requirement)


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    [top] = [p for p in into.iterdir() if p.is_dir()]
    return top


def make_repo(where: Path) -> Path:
    """dateutil's sdist as a git repository, freezegun vendored, the Stepwise config added."""
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        source = unpack(sdist(DATEUTIL), Path(tmp) / "d")
        freezegun = unpack(sdist(FREEZEGUN), Path(tmp) / "f")
        repo = where / "dateutil"
        shutil.copytree(source, repo)
        shutil.copytree(freezegun / "freezegun", repo / "vendor" / "freezegun")
    config = {"validate": [VALIDATE], "allow_commands": ["python"], "batch_size": 3,
              "env": {"PYTHONPATH": "src:vendor"}, "evidence": {"coverage": "off"}}
    (repo / ".github").mkdir(exist_ok=True)
    (repo / ".github" / "stepwise.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "python-dateutil 2.9.0.post0 (sdist)")
    return repo


def issue(paths: list[str]) -> Any:
    block = {"recipe": "replace", "paths": paths, "find": FIND,
             "replace": r"\1pass  # F401: unused import removed"}
    text = yaml.safe_dump(block, sort_keys=False)
    return parse_issue_file(f"# Remove unused imports (F401)\n\n```stepwise\n{text}```\n")


class TimedSandbox(CountingSandbox):
    """CountingSandbox, adding up the seconds of whole runs and of runs on named tests."""

    def __init__(self) -> None:
        super().__init__()
        self.__dict__["seconds"] = {"whole": 0.0, "focused": 0.0}

    def run(self, argv: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = super().run(argv, **kwargs)
        if "pytest" in argv:
            kind = "focused" if any(".py::" in arg for arg in argv) else "whole"
            self.__dict__["seconds"][kind] += time.perf_counter() - started
        return result


@dataclass
class Row:
    name: str
    whole: int
    focused: int
    per_culprit: str
    seconds: float
    committed: int
    whole_s: float
    focused_s: float

    @property
    def suite_runs(self) -> float:
        """Whole-suite runs, each focused run counted as the share of a whole run it took."""
        if not self.focused or not self.whole:
            return float(self.whole)
        return self.whole + self.focused_s / (self.whole_s / self.whole)


def run_job(name: str, base: Path, where: Path, paths: list[str],
            forced: SplitPlan | None = None) -> Row:
    repo = where / name.replace(" ", "-").replace(",", "")
    shutil.copytree(base, repo, symlinks=True)
    sandbox = TimedSandbox()
    session = LocalSession(repo, NUMBER, sink=Recorder(), sandbox=sandbox)  # type: ignore[arg-type]
    if forced is not None:
        session.services.features = with_feature(session.services.features, bisect_feature(
            ci=CI_CANDIDATES, plan=lambda *_args, **_kwargs: forced))
    started = time.perf_counter()
    outcome = session.run(issue(paths), yes=True)
    seconds = time.perf_counter() - started
    job = session.store.load(NUMBER)
    assert job is not None
    culprits = [b for b in job.batches if bisect_of(b).split_from is not None]
    split = next((bisect_of(b).split for b in job.batches if bisect_of(b).split is not None), None)
    if paths != GOOD and ([b.files for b in culprits] != [[CULPRIT]] or outcome.exit_code != 4):
        raise RuntimeError(f"{name}: expected {CULPRIT} set aside at its gate, got "
                           f"{[b.files for b in culprits]} ({outcome.message})")
    per = f"{len(split.results) - 1}" if split is not None else "-"
    committed = sum(len(b.files) for b in job.batches if b.status is BatchStatus.COMPLETED)
    spent = sandbox.__dict__["seconds"]
    return Row(name, sandbox.validations - sandbox.focused, sandbox.focused, per, seconds,
               committed, spent["whole"], spent["focused"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    print(f"bench.dateutil_split: {DATEUTIL}, batch of 3 with one culprit ({CULPRIT}); "
          f"{machine_facts()}")
    with tempfile.TemporaryDirectory(prefix="bench-dateutil-") as tmp:
        where = Path(tmp)
        base = make_repo(where)
        every = [CULPRIT, *GOOD]
        floor = run_job("one run per batch", base, where, GOOD)
        rows = [floor,
                run_job("halves, whole runs (before)", base, where, every,
                        SplitPlan(alone=False, focus=())),
                run_job("each file alone, whole runs", base, where, every,
                        SplitPlan(alone=True, focus=())),
                run_job("chosen (alone, failing tests first)", base, where, every)]
    print(f"{'configuration':<38} {'whole runs (s)':>14} {'focused (s)':>12} {'split runs':>10} "
          f"{'wall s':>7} {'suite runs':>10}  ratio to one run per batch: suite runs, wall")
    for row in rows:
        print(f"{row.name:<38} {row.whole:>3} ({row.whole_s:>6.1f}) {row.focused:>3} "
              f"({row.focused_s:>5.1f}) {row.per_culprit:>10} {row.seconds:>7.1f} "
              f"{row.suite_runs:>10.2f}  {row.suite_runs / floor.suite_runs:.2f}x, "
              f"{row.seconds / floor.seconds:.2f}x")
    print("whole runs and runs on the failing tests include the baseline, the batch's own run "
          "and the failure check's re-runs; split runs: the validations after the batch's own, "
          "for its one culprit; suite runs: whole runs plus each focused run as the fraction "
          "of a whole run it took in the same job (the load-independent cost; the machine's "
          "load changes the wall times between configurations)")


if __name__ == "__main__":
    main()
