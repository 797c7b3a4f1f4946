"""Nothing Stepwise posts exceeds GitHub's limits: a gate comment with 14 failing matrix jobs'
long logs is posted once, within 65,536 characters, with its commands and a pointer to the rest."""

from __future__ import annotations

from pathlib import Path

from bot.github.app import GitHubApp
from bot.github.forge import GitHubForge, marker
from jobs.basics.errors import ErrorInfo, RetryClass
from jobs.basics.github_limits import BODY_CHARS
from jobs.ports import Publication
from tests.bot.github.client_kit import failure_gate_job
from tests.kit.github import FakeGitHub


def matrix_tails(jobs: int = 14, lines: int = 100) -> str:
    return "\n\n".join(f"tests (py3.{n}, ubuntu):\n" + "\n".join(
        f"E   AssertionError: expected ü{i} but got 'straße' in test_module_{n}.py" for i in range(lines))
        for n in range(jobs))


def test_a_ci_failed_gate_with_14_long_matrix_logs_is_posted_within_the_limit(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        client, job = failure_gate_job(gh)
        assert job.gate is not None
        job.gate.report = ErrorInfo(code="ci_failed", retry_class=RetryClass.NEEDS_HUMAN,
                                    message="CI failed on milestone 1's head", hint="retry or revert",
                                    evidence={"output_tail": matrix_tails()})
        forge = GitHubForge(client, job.repo, task_center_url="https://stepwise.example.org")
        forge.publish(job, Publication.GATE, "")
        forge.publish(job, Publication.GATE, "")  # published again: edited, never a second comment
        (comment,) = gh.comments_on("octo/widgets", job.number)
        assert len(comment.body) <= BODY_CHARS
        assert "`/stepwise skip <reason>`" in comment.body and "`/stepwise cancel`" in comment.body
        assert "Too long for GitHub" in comment.body
        assert f"https://stepwise.example.org/jobs/{job.id}" in comment.body
        assert comment.body.rsplit("\n", 1)[-1].startswith(marker(job, "").removesuffix(" -->"))
        assert job.outbox == [] and job.gate.shown_at is not None
        assert not [r for r in gh.requests if r.status == 422]


def test_a_reply_without_a_job_is_cut_too(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        number = gh.add_issue("octo/widgets", "t", "b", user="maria")
        client = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                           base_url=gh.base_url).client(1)
        forge = GitHubForge(client, "octo/widgets")
        forge.reply(None, number, "refusal", "The spec is invalid:\n" + "é" * 70_000 +
                    "\n\nFix it, then comment `/stepwise retry`")
        (comment,) = gh.comments_on("octo/widgets", number)
        assert len(comment.body) <= BODY_CHARS and "`/stepwise retry`" in comment.body
