"""Comments and the PR card link to the task center (at the gate's batch) when it is configured."""

from __future__ import annotations

from pathlib import Path

from bot.github.app import GitHubApp
from bot.github.forge import GitHubForge, reported_milestone
from jobs.domain.model import BatchStatus
from jobs.ports import Publication
from tests.bot.taskcenter.conftest import build
from tests.kit.github import FakeGitHub
from tests.kit.records import make_batch, make_job


def test_gate_comments_and_the_card_link_to_the_task_center(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        number = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        job = build("failure_gate", 0)
        job.repo, job.number, job.head_sha = "octo/widgets", number, job.base_sha
        job.server.pull = None
        linked = GitHubForge(client, job.repo, task_center_url="https://stepwise.example.org/")
        linked.publish(job, Publication.GATE, "")
        (comment,) = gh.comments_on("octo/widgets", number)
        url = f"https://stepwise.example.org/jobs/{job.id}"
        assert f"[Details in the task center]({url}#batch-2)" in comment.body
        assert "/stepwise retry" in comment.body
        job.gate = None
        assert linked.card(job).endswith(f"[Details in the task center]({url})")
        assert "task center" not in GitHubForge(client, job.repo).card(job)


def test_each_milestone_report_is_a_comment_of_its_own(tmp_path: Path) -> None:
    """The report is published just before the milestone gate opens: it used to be keyed
    `milestone:0` whatever the milestone, so the second report overwrote the first."""
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        number = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        batches = [make_batch(1, 1, status=BatchStatus.COMPLETED),
                   make_batch(2, 2, status=BatchStatus.PENDING)]
        job = make_job(batches=batches, number=number)
        job.repo = "octo/widgets"
        forge = GitHubForge(client, job.repo)
        assert reported_milestone(job) == 1
        forge.publish(job, Publication.MILESTONE_REPORT, "")
        job.batches[1].status = BatchStatus.COMPLETED
        assert reported_milestone(job) == 2
        forge.publish(job, Publication.MILESTONE_REPORT, "")
        bodies = [c.body for c in gh.comments_on("octo/widgets", number)]
        assert len(bodies) == 2
        assert any(f"stepwise:{job.id}:milestone:1" in b for b in bodies)
        assert any(f"stepwise:{job.id}:milestone:2" in b for b in bodies)
