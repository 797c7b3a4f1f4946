"""Comments and the PR card link to the task center (at the gate's batch) when it is configured."""

from __future__ import annotations

from pathlib import Path

from bot.github.app import GitHubApp
from bot.github.forge import GitHubForge
from jobs.kernel.gates import Verb, apply_verb, open_gate
from jobs.kernel.model import BatchStatus, Gate, JobStatus
from jobs.ports import Publication
from tests.bot.github.client_kit import failure_gate_job
from tests.kit.github import FakeGitHub
from tests.kit.records import T0, make_batch, make_job


def test_gate_comments_and_the_card_link_to_the_task_center(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        client, job = failure_gate_job(gh)
        linked = GitHubForge(client, job.repo, task_center_url="https://stepwise.example.org/")
        linked.publish(job, Publication.GATE, "")
        (comment,) = gh.comments_on("octo/widgets", job.number)
        url = f"https://stepwise.example.org/jobs/{job.id}"
        assert f"[Details in the task center]({url}#batch-2)" in comment.body
        assert "/stepwise skip <reason>" in comment.body  # a replace batch: a retry fails alike
        job.gate = None
        assert linked.card(job).endswith(f"[Details in the task center]({url})")
        assert "task center" not in GitHubForge(client, job.repo).card(job)


def test_each_milestone_report_is_its_gate_s_comment_of_its_own(tmp_path: Path) -> None:
    """One comment per decision: the milestone report is the milestone gate's comment (the
    report publication only refreshes the card), and each milestone's gate gets its own."""
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        number = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        batches = [make_batch(1, 1, status=BatchStatus.COMPLETED),
                   make_batch(2, 2, status=BatchStatus.PENDING)]
        job = make_job(batches=batches, number=number, status=JobStatus.RUNNING)
        job.repo, job.server.started_by = "octo/widgets", "maria"
        forge = GitHubForge(client, job.repo)
        forge.publish(job, Publication.MILESTONE_REPORT, "")
        assert gh.comments_on("octo/widgets", number) == []  # no report besides the gate
        for milestone in (1, 2):
            open_gate(job, Gate.MILESTONE, reason=f"milestone {milestone} is done", now=T0,
                      milestone=milestone)
            forge.publish(job, Publication.GATE, "")
            apply_verb(job, Verb.APPROVE)
            job.batches[1].status = BatchStatus.COMPLETED
        bodies = [c.body for c in gh.comments_on("octo/widgets", number)]
        assert len(bodies) == 2 and all(b.startswith("@maria: ") for b in bodies)
        assert all(f"Milestone {m} (1/1 completed)" in b for m, b in zip((1, 2), bodies, strict=True))
