"""Split batches' card and note sections (jobs/features/bisect/notes.py `PARTS`), installed like
every feature's: the words on a split batch's card line come before CI's, the card's list of
split batches before the base's merges, and the note's "## Split batches" right after the
batches table, as they did when the card and the note called them directly."""

from __future__ import annotations

from jobs.composition import FEATURES
from jobs.features.base_moves.record import BaseMerge
from jobs.features.bisect.notes import PARTS
from jobs.features.bisect.record import SplitCause, SplitState, SubsetResult
from jobs.features.ci.record import CiBatch, CiResult
from jobs.kernel.feature_parts import INSTALLED
from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.change_note import render_note
from jobs.notes.progress import render_card
from tests.kit.records import T0, make_batch, make_job


def split_job() -> Job:
    split = SplitState(files=["a.py", "b.py"], edited_tree="t" * 40, reason="validation failed",
                       results=[SubsetResult(files=["a.py"], passed=True),
                                SubsetResult(files=["b.py"], passed=False)],
                       causes=[SplitCause(files=["b.py"], kind="culprit")],
                       finished=True, committed=True)
    first = make_batch(1, files=["a.py"], status=BatchStatus.COMPLETED, commit="c" * 40,
                       split=split, parts={CiBatch.PART: CiBatch(results=[CiResult(
                           scope="batch", number=1, sha="c" * 40, state="passed", at=T0)])})
    aside = make_batch(2, files=["b.py"], status=BatchStatus.FAILED, split_from=1,
                       split_kind="culprit")
    merge = BaseMerge(base_sha="d" * 40, commit="e" * 40, at=T0)
    return make_job(batches=[first, aside], status=JobStatus.RUNNING, base_merges=[merge])


def test_bisect_s_parts_are_installed_first_as_its_feature_is_first() -> None:
    assert FEATURES[0].name == "bisect" and FEATURES[0].parts is PARTS
    assert next(iter(INSTALLED)) == "bisect"


def test_a_split_batch_s_card_line_says_the_split_then_what_ci_said() -> None:
    card = render_card(split_job())
    line = next(text for text in card.splitlines() if "batch 1: completed" in text)
    split_at = line.index("split after validation failed (2 subsets validated)")
    assert "set aside as batch 2" in line
    assert split_at < line.index("CI passed")


def test_the_card_lists_split_batches_before_the_base_s_merges() -> None:
    card = render_card(split_job())
    assert "Split batches:" in card and "merged 1 time(s)" in card
    assert card.index("Split batches:") < card.index("merged 1 time(s)")


def test_the_note_s_split_section_follows_the_batches_table() -> None:
    note = render_note(split_job(), now=T0)
    assert "## Split batches" in note
    section = note.index("## Split batches")
    assert note.index("## Batches") < section
    assert "- batch 1 failed with all 2 files (validation failed); 2 subsets validated, 1 " \
        "validation for 1 cause: 1.0 a cause; committed 1 files" in note
    assert "  - batch 2: " in note[section:]
