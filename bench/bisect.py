"""Benchmark: split batches (bisection) and `batch_size: auto` on a repository with planted
culprits, against today's behaviour (the whole batch retried, then the `failure` gate).

    .venv/bin/python -m bench.bisect [--files 60] [--batch-size 6]

A generated repository of N modules (tests/kit/bisect_repos.py) whose unittest suite fails
when culprit modules are renamed: two culprits alone and one interaction of two files (the
suite fails only when both are renamed), all in different batches of the fixed size. A local
job renames every module; at each `failure` gate the "human" types `skip` (what today's flow
asks of them), and the job goes on until it completes. For each configuration: human
interventions, validation runs (every `python -m unittest`, baseline and final review
included), wall time, files committed before the first gate and in all. Ratios against
today's behaviour in the same run.

Then dateutil's pyupgrade + F401 job as issue 30 tried it, generated so that it needs no
network (tests/kit/f401_repos.py): 17 modules, each losing one import F401 calls unused, one
of them a re-export whose removal breaks exactly tests/test_imports.py; batch size 5, so it
holds back four good files of its batch today.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import machine_facts
from jobs.composition import with_feature
from jobs.features.bisect.record import bisect_of
from jobs.features.bisect.wiring import bisect_feature
from jobs.features.ci.wiring import CANDIDATES as CI_CANDIDATES
from jobs.inputs.spec import IssueTask
from jobs.kernel.gates import Verb
from jobs.kernel.model import BatchStatus
from jobs.local import LocalSession
from tests.kit import f401_repos
from tests.kit.bisect_repos import NUMBER, CountingSandbox, build, rename_issue
from tests.kit.local_e2e import Recorder


@dataclass
class Figures:
    name: str
    interventions: int
    validations: int
    seconds: float
    before_first_gate: int
    committed: int
    good: int
    sizes: str


def committed_files(session: LocalSession, number: int) -> int:
    job = session.store.load(number)
    assert job is not None
    return sum(len(b.changed_files) for b in job.batches if b.status is BatchStatus.COMPLETED)


def folder(name: str) -> str:
    """A directory name for the row `name` without its commas, spaces and brackets: an overlay
    cannot take a path with a comma, so a row's worktree would fall back to writing through."""
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")


def run_job(name: str, root: Path, files: int, culprits: list[int],
            pairs: list[tuple[int, int]], *, split: bool, **config: Any) -> Figures:
    repo = build(root / folder(name), files, culprits, pairs, **config)
    return run_task(name, repo, NUMBER, rename_issue(), files - len(culprits) - 2 * len(pairs),
                    split=split)


def run_dateutil_shape(name: str, root: Path, *, split: bool, **config: Any) -> Figures:
    """dateutil's pyupgrade + F401 job, generated (tests/kit/f401_repos.py): one file of 17
    breaks exactly tests/test_imports.py."""
    repo = f401_repos.build(root / folder(name), **config)
    return run_task(name, repo, f401_repos.NUMBER, f401_repos.f401_issue(),
                    len(f401_repos.MODULES) - 1, split=split)


def run_task(name: str, repo: Path, number: int, task: IssueTask, good: int, *,
             split: bool) -> Figures:
    sandbox = CountingSandbox()
    session = LocalSession(repo, number, sink=Recorder(), sandbox=sandbox)  # type: ignore[arg-type]
    session.services.features = with_feature(session.services.features,
                                             bisect_feature(ci=CI_CANDIDATES, enabled=split))
    started = time.perf_counter()
    outcome = session.run(task, yes=True)
    interventions, before_first_gate = 0, None
    while outcome.exit_code == 4:  # a `failure` gate: the human skips the batch
        if before_first_gate is None:
            before_first_gate = committed_files(session, number)
        interventions += 1
        _, outcome = session.verb(Verb.SKIP, reason="a human will look at it")
        if interventions > 100:
            raise RuntimeError(f"{name}: still at a gate after 100 skips")
    if outcome.exit_code != 0:
        raise RuntimeError(f"{name}: ended with {outcome.exit_code}: {outcome.message}")
    seconds = time.perf_counter() - started
    job = session.store.load(number)
    assert job is not None
    sizes = ",".join(str(bisect_of(b).auto_size) for b in job.batches if bisect_of(b).auto_size)
    total = committed_files(session, number)
    return Figures(name, interventions, sandbox.validations, seconds,
                   total if before_first_gate is None else before_first_gate, total,
                   good, sizes)


def print_table(rows: list[Figures], baseline: Figures) -> None:
    print(f"{'configuration':<46} {'humans':>6} {'runs':>5} {'wall s':>7} "
          f"{'before 1st gate':>15} {'committed':>9}  ratios vs today (humans, runs, wall)")
    for row in rows:
        print(f"{row.name:<46} {row.interventions:>6} {row.validations:>5} {row.seconds:>7.1f} "
              f"{row.before_first_gate:>8}/{row.good:<6} {row.committed:>5}/{row.good:<3}  "
              f"{row.interventions / max(baseline.interventions, 1):.2f}x, "
              f"{row.validations / baseline.validations:.2f}x, "
              f"{row.seconds / baseline.seconds:.2f}x"
              + (f"  sizes {row.sizes}" if row.sizes else ""))


def dateutil_rows(root: Path) -> list[Figures]:
    return [run_dateutil_shape(f"dateutil-shaped F401, {how}", root, split=split, **config)
            for how, split, config in (
                ("today (no split), size 5", False, {"batch_size": 5}),
                ("split, size 5", True, {"batch_size": 5}),
                ("split, auto (max 16)", True, {"batch_size": "auto", "batch_size_max": 16}))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=6)
    parser.add_argument("--dateutil-only", action="store_true",
                        help="only the dateutil-shaped job (about 20 s)")
    args = parser.parse_args()
    if args.dateutil_only:
        with tempfile.TemporaryDirectory(prefix="bench-bisect-") as tmp:
            shaped = dateutil_rows(Path(tmp))
        print_table(shaped, shaped[0])
        return
    size, files = args.batch_size, args.files
    # Culprits in three different batches of the fixed size; the pair inside one batch.
    culprits = [size + 1, 5 * size + 3]
    pairs = [(3 * size + 1, 3 * size + 4)]
    print(f"bench.bisect: {files} files, culprits {culprits}, interaction {pairs}, "
          f"batch size {size}; {machine_facts()}")
    with tempfile.TemporaryDirectory(prefix="bench-bisect-") as tmp:
        root = Path(tmp)
        today = run_job("today (no split), size 6", root, files, culprits, pairs,
                        split=False, batch_size=size)
        rows = [today, run_job("split, size 6", root, files, culprits, pairs, split=True,
                               batch_size=size)]
        rows.append(run_job("split, size 12", root, files, culprits, pairs, split=True,
                            batch_size=2 * size))
        rows.append(run_job("split, size 3", root, files, culprits, pairs, split=True,
                            batch_size=max(size // 2, 1)))
        rows.append(run_job("split, auto (max 16)", root, files, culprits, pairs, split=True,
                            batch_size="auto", batch_size_max=16))
        rows.append(run_job("today (no split), auto (max 16)", root, files, culprits, pairs,
                            split=False, batch_size="auto", batch_size_max=16))
        clean = [run_job(f"clean repo, split, size {n}", root, files, [], [], split=True,
                         batch_size=n) for n in (size, 2 * size)]
        clean.append(run_job("clean repo, split, auto (max 16)", root, files, [], [],
                             split=True, batch_size="auto", batch_size_max=16))
        shaped = dateutil_rows(root)
    print_table(rows, today)
    print()
    print_table(clean, clean[0])
    print()
    print_table(shaped, shaped[0])


if __name__ == "__main__":
    main()
