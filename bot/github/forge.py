"""The forge port on GitHub: plan and gate comments, the draft PR whose body is the progress card.

Each comment carries a hidden marker; the comment ids are remembered in the job record, and a
marker found on the issue is edited rather than posted again, so a retried step never
duplicates a comment.
"""

from __future__ import annotations

import logging

from bot.commands.spec import PREFIX
from bot.github.client import ForgeError, Installation
from jobs.domain.model import Gate, Job, JobStatus
from jobs.domain.notes import gate_prompt, render_card, render_plan
from jobs.domain.redact import redact
from jobs.ports import Publication

log = logging.getLogger(__name__)
COMMAND_PREFIX = f"{PREFIX} "
MERGE_ADVICE = (
    "Merge this pull request with a merge commit or a rebase, not a squash, so that every "
    "batch stays revertable (`/stepwise revert <batch>`)."
)
SQUASH_WARNING = (
    "⚠️ This repository only allows squash merges: after a squash merge the batches can no "
    "longer be reverted one by one."
)
NOT_DRAFT_NOTE = "Draft pull requests are not available here, so the pull request is a normal one."


def marker(job: Job, key: str) -> str:
    return f"<!-- stepwise:{job.id}:{key} -->"


class GitHubForge:
    """Publishes one job's messages on its issue and pull request."""

    def __init__(self, client: Installation, full_name: str, *, squash_only: bool = False,
                 web_url: str = "https://github.com", task_center_url: str | None = None) -> None:
        self.client = client
        self.owner, self.name = full_name.split("/", 1)
        self.squash_only = squash_only
        self.web_url = web_url.rstrip("/")
        self.task_center_url = (task_center_url or "").rstrip("/")  # STEPWISE_TASK_CENTER_URL

    # -- the port -------------------------------------------------------------------------------
    def publish(self, job: Job, kind: Publication, text: str) -> None:
        if kind is Publication.PLAN:
            self.upsert(job, job.number, "plan", self.plan_text(job))
        elif kind is Publication.PROGRESS:
            self.refresh_pull(job)
        elif kind is Publication.GATE and job.gate is not None and job.gate.kind is Gate.PLAN:
            self.upsert(job, job.number, "plan", self.plan_text(job))  # the plan asks itself
        elif kind is Publication.GATE and job.gate is not None:
            self.refresh_pull(job)
            self.upsert(job, self.thread(job), f"gate:{job.gate.id}",
                        gate_prompt(job, prefix=COMMAND_PREFIX) + self.center_link(job))
        elif kind is Publication.MILESTONE_REPORT:
            self.refresh_pull(job)
            self.upsert(job, self.thread(job), f"milestone:{job.gate.milestone if job.gate else 0}",
                        self.card(job, fold_finished=False))
        elif kind is Publication.SUMMARY:
            self.finish(job)
        elif kind is Publication.RESUMED:
            count = job.extra.get("interruptions", 0)
            self.upsert(job, self.thread(job), f"resumed:{count}:{job.version}", text)
        else:
            log.info("notice", extra={"job_id": job.id, "notice": text})

    # -- pieces ---------------------------------------------------------------------------------
    def thread(self, job: Job) -> int:
        """Where conversation goes: the PR once it exists, else the issue."""
        pull = job.extra.get("pull")
        return int(pull["number"]) if isinstance(pull, dict) else job.number

    def card(self, job: Job, *, fold_finished: bool = True) -> str:
        return render_card(job, fold_finished=fold_finished, prefix=COMMAND_PREFIX,
                           link=lambda sha: f"{self.web_url}/{self.owner}/{self.name}/commit/{sha}"
                           ) + self.center_link(job)

    def center_link(self, job: Job) -> str:
        """The job's task center page (at the open gate's batch), when one is configured."""
        if not self.task_center_url:
            return ""
        batch = job.gate.batch if job.gate is not None else None
        anchor = f"#batch-{batch}" if batch is not None else ""
        return f"\n\n[Details in the task center]({self.task_center_url}/jobs/{job.id}{anchor})"

    def plan_text(self, job: Job) -> str:
        parts = [render_plan(job)]
        pull = job.extra.get("pull")
        if isinstance(pull, dict):
            parts.append(f"Pull request: #{pull['number']}")
            if not pull.get("draft", True):
                parts.append(NOT_DRAFT_NOTE)
        else:
            parts.append("The draft pull request opens with the first batch's commit.")
        if self.squash_only:
            parts.append(SQUASH_WARNING)
        if job.gate is not None:
            parts.append(gate_prompt(job, prefix=COMMAND_PREFIX))
        return "\n\n".join(parts) + self.center_link(job)

    def pull_body(self, job: Job) -> str:
        return redact("\n\n".join([self.card(job), f"Closes nothing by itself: tracks #{job.number}.",
                                   MERGE_ADVICE, marker(job, "card")]))

    def refresh_pull(self, job: Job) -> None:
        """Open the PR after the first commit; afterwards keep its body (the card) current."""
        if job.head_sha == job.base_sha:
            return  # GitHub refuses a pull request without commits
        pull = job.extra.get("pull")
        if not isinstance(pull, dict):
            opened, draft = self.client.create_pull(
                self.owner, self.name, title=f"stepwise: {job.title} (#{job.number})",
                head=job.branch, base=job.base_branch, body=self.pull_body(job))
            job.extra["pull"] = {"number": opened.number, "node_id": opened.node_id,
                                 "url": opened.html_url, "draft": draft}
            self.upsert(job, job.number, "plan", self.plan_text(job))
            return
        self.client.update_pull_body(self.owner, self.name, int(pull["number"]),
                                     self.pull_body(job))

    def finish(self, job: Job) -> None:
        self.refresh_pull(job)
        pull = job.extra.get("pull")
        if job.status is JobStatus.COMPLETED and isinstance(pull, dict) and pull.get("draft"):
            self.client.mark_ready(str(pull["node_id"]))
            pull["draft"] = False
        words = {JobStatus.COMPLETED: "completed", JobStatus.CANCELLED: "was cancelled",
                 JobStatus.FAILED: "failed"}
        head = f"Stepwise {words.get(job.status, str(job.status))}."
        if job.status is JobStatus.COMPLETED:
            head += f" The change note is `{job.note_path}`"
            head += f" in #{pull['number']}, now ready for review." if isinstance(pull, dict) \
                else "."
        if job.error is not None:
            head += f"\n\nError `{job.error.code}` ({job.error.retry_class}): " \
                    f"{job.error.message}\n\nHint: {job.error.hint}"
        self.upsert(job, job.number, "summary", f"{head}\n\n{self.card(job, fold_finished=False)}")

    def reply(self, job: Job | None, number: int, key: str, text: str) -> None:
        """A one-off answer (refusals, status, help), deduplicated by `key`."""
        if job is None:
            self.client.create_comment(self.owner, self.name, number, redact(text))
        else:
            self.upsert(job, number, key, text)

    def upsert(self, job: Job, number: int, key: str, text: str) -> None:
        """Edit the comment carrying this marker, or post it once."""
        tag = marker(job, key)
        body = f"{redact(text)}\n\n{tag}"
        known: dict[str, int] = job.extra.setdefault("comments", {})
        comment_id = known.get(key)
        if comment_id is not None and self.client.update_comment(self.owner, self.name,
                                                                 comment_id, body):
            return
        for comment in self.client.comments(self.owner, self.name, number):
            if comment.is_bot and tag in comment.body:
                self.client.update_comment(self.owner, self.name, comment.id, body)
                known[key] = comment.id
                return
        known[key] = self.client.create_comment(self.owner, self.name, number, body).id


__all__ = ["ForgeError", "GitHubForge", "marker"]
