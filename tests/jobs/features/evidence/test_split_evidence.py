"""The evidence of batches that land by a split and of batches in a row, on real repositories
(tests/kit/bisect_repos.py, validated by `python -m unittest`): the part of a split batch that
lands carries its changed-line coverage, its tests before and after and its edit shapes, as any
batch; and every batch's tests are compared with its own parent's, not with the baseline's."""

from __future__ import annotations

from pathlib import Path

from jobs.features.bisect.record import bisect_of
from jobs.features.evidence.coverage_texts import record_of
from jobs.features.evidence.integrity_parts import batch_tests
from jobs.features.evidence.shapes_texts import shapes_of
from jobs.kernel.model import BatchStatus
from jobs.local import LocalSession
from jobs.notes.progress import render_card
from tests.kit.bisect_repos import NUMBER, CountingSandbox, build, module_path, rename_issue
from tests.kit.local_e2e import Recorder
from tests.kit.repos import make_repo


def run(repo: Path) -> LocalSession:
    session = LocalSession(repo, NUMBER, sink=Recorder(),
                           sandbox=CountingSandbox())  # type: ignore[arg-type]
    session.run(rename_issue(), yes=True)
    return session


def test_the_part_of_a_split_batch_that_lands_carries_its_evidence(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 6, culprits=[3])
    job = run(repo).load()
    first, culprit = job.batches
    assert first.status is BatchStatus.COMPLETED and bisect_of(first).split is not None
    assert culprit.files == [module_path(3)]
    record = record_of(first)
    assert record is not None and record.measured, record
    # The five files that landed, each one changed line, each run by the tests' imports.
    assert (record.run, record.total, record.uncovered) == (5, 5, [])
    tests = batch_tests(first)
    assert tests is not None
    assert (tests.before, tests.after, tests.findings) == ("2 collected, 2 passed",
                                                           "2 collected, 2 passed", [])
    shapes = shapes_of(first)
    assert shapes is not None and shapes.hunks == 5 and len(shapes.shapes) == 1
    card = render_card(job, fold_finished=False)
    assert "batch 1: completed" in card and "changed lines run by the tests: 5 of 5 (100%)" \
        in card, card


# A test that runs only once module 0 has its new name: batch 1 makes it pass, so batch 2's
# parent passes one more test than the baseline did.
WAKING = ('import unittest\n\nfrom pkg import mod_00, mod_01, mod_02, mod_03\n\n\n'
          'class T(unittest.TestCase):\n'
          '    def test_imports(self):\n        self.assertTrue(mod_01.NAME)\n\n'
          '    @unittest.skipUnless(mod_00.NAME == "NEW_NAME", "not renamed yet")\n'
          '    def test_renamed(self):\n        self.assertEqual(mod_00.NAME, "NEW_NAME")\n')


def test_each_batch_is_compared_with_its_own_parent(tmp_path: Path) -> None:
    files = {
        ".github/stepwise.yml": 'validate: ["python -m unittest discover -s tests -q"]\n'
                                "allow_commands: [python]\nbatch_size: 2\n"
                                "batches_per_milestone: 100\n",
        "pkg/__init__.py": "", "tests/__init__.py": "", "tests/test_modules.py": WAKING,
        **{module_path(i): f'"""Module {i}."""\n\nNAME = "OLD_NAME"\n' for i in range(4)}}
    job = run(make_repo(tmp_path / "repo", files)).load()
    assert [b.status for b in job.batches] == [BatchStatus.COMPLETED] * 2
    first, second = (batch_tests(b) for b in job.batches)
    assert first is not None and second is not None
    assert (first.before, first.after) == ("2 collected, 1 passed", "2 collected, 2 passed")
    assert second.before == first.after == second.after  # its parent is batch 1, not the base
