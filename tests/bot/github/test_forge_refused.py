"""Never an endless retry: a 4xx that asking again will not change (422, 404, 403 without the
permission) is `do_not_retry`; a publication GitHub refuses so is kept as refused, shown on the
card and in `status`, and the reconciler does not publish it again."""

from __future__ import annotations

from pathlib import Path

from bot.github.app import GitHubApp
from bot.github.forge import GitHubForge
from jobs.basics.errors import RetryClass
from jobs.kernel import outbox
from jobs.notes.progress import render_card
from jobs.ports import Publication
from tests.bot.github.client_kit import failure_gate_job, forge_error
from tests.kit.github import FakeGitHub

INVALID = {"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
           "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                       "message": "body is too long (maximum is 65536 characters)"}]}


def test_a_gate_comment_github_refuses_is_tried_once_per_state_not_forever(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        client, job = failure_gate_job(gh)
        assert job.gate is not None
        gh.fail("POST", r"/issues/\d+/comments$", 422, times=100, body=INVALID)
        forge = GitHubForge(client, job.repo)
        forge.publish(job, Publication.GATE, "")
        key = outbox.gate_key(job.gate.id)
        entry = outbox.entry(job, key)
        assert entry is not None and entry.refused.startswith("github_422")
        assert "body custom body is too long" in entry.refused
        posts = len(gh.requests_to("POST", r"/comments$"))
        for _ in range(3):  # what the reconciler does, pass after pass
            forge.expect(job, Publication.GATE)
            assert forge.deliver_all(job) == 0
        assert len(gh.requests_to("POST", r"/comments$")) == posts  # never sent again
        card = render_card(job)
        assert "GitHub refused the comment for gate" in card and "will not try again" in card
        forge.publish(job, Publication.GATE, "")  # a step publishing a new state: one new try
        assert len(gh.requests_to("POST", r"/comments$")) == posts + 1
        gh.failures.clear()
        forge.publish(job, Publication.GATE, "")
        assert outbox.entry(job, key) is None and job.gate.shown_at is not None
        assert len(gh.comments_on("octo/widgets", job.number)) == 1


def test_pull_request_422s_are_classified_by_githubs_error_fields(tmp_path: Path) -> None:
    with FakeGitHub(root=tmp_path / "gh") as gh:
        gh.add_repo("octo", "widgets", {"a.py": "x = 1\n"})
        inst = GitHubApp(app_id=gh.app_id, private_key=gh.private_key_pem,
                         base_url=gh.base_url).client(1)
        error = forge_error(lambda: inst.create_pull("octo", "widgets", title="t", head="nope",
                                                     base="main", body="b"))
        assert (error.code, error.retry_class) == ("github_422", RetryClass.DO_NOT_RETRY)
        assert {"field": "head", "code": "invalid", "resource": "PullRequest",
                "message": "head nope is invalid"} in error.evidence["errors"]
        # A draft refusal names the draft field, whatever the wording: retried as a normal PR.
        gh.push_files("octo/widgets", "stepwise/issue-1", {"a.py": "x = 2\n"}, "batch 1")
        gh.fail("POST", r"/pulls$", 422, body={"message": "Validation Failed", "errors": [
            {"resource": "PullRequest", "field": "draft", "code": "invalid"}]})
        pull, is_draft = inst.create_pull("octo", "widgets", title="t", head="stepwise/issue-1",
                                          base="main", body="b")
        assert is_draft is False and pull.number > 0
