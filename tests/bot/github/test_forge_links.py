"""Comments and the PR card link to the task center (at the gate's batch) when it is configured."""

from __future__ import annotations

from pathlib import Path

from bot.github.client import GitHubApp
from bot.github.forge import GitHubForge
from jobs.ports import Publication
from tests.bot.taskcenter.conftest import build
from tests.kit.github import FakeGitHub


def test_gate_comments_and_the_card_link_to_the_task_center(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        number = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        job = build("failure_gate", 0)
        job.repo, job.number, job.head_sha = "octo/widgets", number, job.base_sha
        job.extra.pop("pull")
        linked = GitHubForge(client, job.repo, task_center_url="https://stepwise.example.org/")
        linked.publish(job, Publication.GATE, "")
        (comment,) = gh.comments_on("octo/widgets", number)
        url = f"https://stepwise.example.org/jobs/{job.id}"
        assert f"[Details in the task center]({url}#batch-2)" in comment.body
        assert "/stepwise retry" in comment.body
        job.gate = None
        assert linked.card(job).endswith(f"[Details in the task center]({url})")
        assert "task center" not in GitHubForge(client, job.repo).card(job)
