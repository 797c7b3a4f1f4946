"""A feature's lines in the plan and the card (`CardSection`, jobs/kernel/feature_parts.py):
installed with the feature's parts, each at its place (the plan's list after the branch, under
the card's status, after a batch's line, under a milestone's batches); gone once uninstalled."""

from __future__ import annotations

from jobs.kernel.feature_parts import CardSection, FeatureParts, installed
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, JobStatus
from jobs.notes.progress import render_card, render_plan
from tests.kit.records import make_batch, make_job

PARTS = FeatureParts(name="lamp", card_sections=(CardSection(
    plan=lambda job: [f"- Lamp: {len(job.batches)} batches lit"],
    status=lambda job: ["", "The lamp is on."] if job.status is JobStatus.RUNNING else [],
    batch=lambda _job, batch: f" — lamp {batch.number}",
    milestone=lambda _job, milestone: [f"- Lamp of milestone {milestone}: bright"]),))


def lamp_job() -> Job:
    batches: list[Batch] = [make_batch(1, status=BatchStatus.COMPLETED),
                            make_batch(2, milestone=2)]
    return make_job(batches=batches, status=JobStatus.RUNNING)


def test_a_feature_s_card_section_puts_its_lines_at_their_places() -> None:
    job = lamp_job()
    without = render_plan(job).splitlines()
    with installed(PARTS):
        plan, card = render_plan(job), render_card(job, fold_finished=False)
    lines = plan.splitlines()
    branch = lines.index(f"- Branch: `{job.branch}`")
    after_branch = lines[branch + 1:]
    # Installed last, the lamp's line follows the built-in features' own (CI's, evidence's
    # forecast: those the tree has), which stay as they were.
    lamp = after_branch.index("- Lamp: 2 batches lit")
    assert lamp > 0 and after_branch[:lamp] == without[branch + 1:branch + 1 + lamp]
    status = card.index("Status: `")
    assert status < card.index("The lamp is on.") < card.index("Milestone 1 (")
    batch_one = next(line for line in card.splitlines() if "batch 1:" in line)
    assert batch_one.endswith(" — lamp 1")
    assert card.index("- Lamp of milestone 1: bright") < card.index("Milestone 2 (") < \
        card.index("- Lamp of milestone 2: bright")


def test_an_uninstalled_feature_adds_nothing() -> None:
    job = lamp_job()
    with installed(PARTS):
        pass
    plan, card = render_plan(job), render_card(job, fold_finished=False)
    assert "Lamp" not in plan and "lamp" not in card
