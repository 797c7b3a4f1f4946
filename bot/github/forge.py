"""The forge port on GitHub: plan and gate comments, the draft PR whose body is the progress card.

What a job must show is first owed in its outbox (jobs/kernel/outbox.py), then published; what GitHub
does not confirm stays owed, is saved with the record and is published again by the
reconciler (bot/server/reconciler.py), so a fault while publishing never fails a step. Each comment
carries a hidden marker; the comment ids are remembered in the job record, and a marker found on
the issue is edited rather than posted again, so a retried publication never duplicates a
comment (the pull request is found again by its head branch).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from bot.commands.registry import voice as server_voice
from bot.github import coalesce
from bot.github.check_run_publish import send_check_run
from bot.github.ci import RepositoryCi, ci_failures
from bot.github.client import Installation
from bot.github.conversation import (
    PLAN_CANCELLED,
    PLAN_SUPERSEDED,
    QUEUE_DONE,
    asking_line,
    closing_head,
    gate_slot,
    plan_slot,
    retry_line,
)
from bot.github.errors import ForgeError, refused
from jobs.basics.errors import RetryClass
from jobs.basics.github_limits import BODY_CHARS, fit_chars, fit_title
from jobs.basics.redact import redact
from jobs.decisions.ci import CheckObservation
from jobs.kernel import outbox
from jobs.kernel.job import Job
from jobs.kernel.model import Gate, JobStatus
from jobs.kernel.outbox import gate_key
from jobs.kernel.records import PullRequest
from jobs.notes.check_runs import CheckRunDraft
from jobs.notes.progress import gate_prompt, render_card, render_plan
from jobs.ports import CiFailure, CiReport, Publication, RerunRefused

log = logging.getLogger(__name__)
MERGE_ADVICE = (
    "Merge this pull request with a merge commit or a rebase, not a squash, so that every "
    "batch stays revertable ({revert})."
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
                 web_url: str = "https://github.com", task_center_url: str | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.client = client
        self.clock = clock
        self.owner, self.name = full_name.split("/", 1)
        self.squash_only = squash_only
        self.web_url = web_url.rstrip("/")
        self.task_center_url = (task_center_url or "").rstrip("/")  # STEPWISE_TASK_CENTER_URL
        self.voice = server_voice()  # every command it shows reads `/stepwise <verb>`

    # -- the port: an outbox in the job's record -------------------------------------------------
    def publish(self, job: Job, kind: Publication, text: str) -> None:
        """Owe what `kind` shows, then publish it; what GitHub does not confirm stays owed in
        `job.outbox` (saved with the record) for the reconciler, and never fails the step."""
        for key in self.owe(job, kind, text):
            self.deliver(job, key)
        if kind is Publication.NOTICE:
            log.info("notice", extra={"job_id": job.id, "notice": text})

    def expect(self, job: Job, kind: Publication) -> None:
        self.owe(job, kind, "", fresh=False)

    def owe(self, job: Job, kind: Publication, text: str, *, fresh: bool = True) -> list[str]:
        """Record the outbox entries `kind` stands for; returns their keys. `fresh` (a step
        publishing a new state) gives an entry GitHub refused one new try."""
        gate = job.gate
        keys: list[str] = []
        if kind is Publication.PLAN:
            keys = ["plan"]
        elif kind is Publication.PROGRESS:
            keys = ["card"]
        elif kind is Publication.GATE and gate is not None:
            keys = [gate_key(gate.id)] if gate.kind is Gate.PLAN else [gate_key(gate.id), "card"]
        elif kind is Publication.MILESTONE_REPORT:
            keys = ["card"]  # the report is the milestone gate's comment (one per decision)
        elif kind is Publication.SUMMARY:
            keys = ["summary"]
        elif kind is Publication.RESUMED:
            keys = [f"resumed:{job.server.interruptions}:{job.version}"]
        now = self.clock()
        for key in keys:
            outbox.owe(job, key, kind.value, now=now, text=text if kind is Publication.RESUMED
                       else "", retry_refused=fresh)
        return keys

    def deliver(self, job: Job, key: str) -> bool:
        """Publish one owed entry from the current record; True once GitHub confirmed it.
        Only a permanent fault (installation or repository gone) is raised."""
        entry = outbox.entry(job, key)
        if entry is None:
            return True
        if entry.refused:
            return False
        if coalesce.put_off(job, key, entry.text, self.clock()):
            return False  # sent a moment ago: the newest goes with a later publication
        try:
            self._send(job, entry.key, entry.text)
        except ForgeError as exc:
            if refused(exc):  # a 4xx that will not change: shown, never retried in a loop
                outbox.refuse(job, key, f"{exc.code}: {exc.message} ({exc.hint})")
                log.warning("GitHub refused a publication for good", extra={
                    "job_id": job.id, "publication": key, "code": exc.code})
                return False
            if exc.retry_class is RetryClass.DO_NOT_RETRY:
                raise
            outbox.failed(job, key, f"{exc.code}: {exc.message}")
            log.warning("publication left for the reconciler", extra={
                "job_id": job.id, "publication": key, "code": exc.code})
            return False
        coalesce.sent(job, key, self.clock())
        for shown in self._same_comment(job, key):
            outbox.settle(job, shown, now=self.clock())
        if key.startswith(outbox.GATE_PREFIX) and job.server.pull is not None and \
                outbox.entry(job, "card") is None:  # a card saying "waiting to be published"
            outbox.owe(job, "card", Publication.PROGRESS.value, now=self.clock())
            self.deliver(job, "card")
        return True

    def deliver_all(self, job: Job) -> int:
        """Publish everything owed, gate comments first; returns how many are still owed."""
        outbox.drop_stale(job)
        keys = sorted((e.key for e in outbox.owed(job)),
                      key=lambda k: not k.startswith(outbox.GATE_PREFIX))
        for key in keys:
            self.deliver(job, key)
        return len(outbox.owed(job))

    def _same_comment(self, job: Job, key: str) -> set[str]:
        """`key` and the keys its comment also shows (the plan comment asks the plan gate)."""
        gate = job.gate
        plan = {"plan", gate_key(gate.id)} if gate is not None and gate.kind is Gate.PLAN \
            else {"plan"}
        return plan if key in plan else {key}

    def _send(self, job: Job, key: str, text: str) -> None:
        gate = job.gate
        if key == "card":
            self.refresh_pull(job)
        elif key == "plan" or (gate is not None and gate.kind is Gate.PLAN
                               and key == gate_key(gate.id)):
            self.send_plan(job)  # the plan asks itself
        elif key.startswith(outbox.GATE_PREFIX):
            if gate is not None and key == gate_key(gate.id):
                self.upsert(job, self.thread(job), gate_slot(gate), self.gate_text(job))
        elif key.startswith("milestone:"):
            self.upsert(job, self.thread(job), key, self.card(job, fold_finished=False))
        elif key == "summary":
            self.finish(job)
        elif key.startswith("resumed:"):
            self.upsert(job, self.thread(job), key, text)
        elif key.startswith(outbox.CHECK_PREFIX):
            send_check_run(self.ci(), job, json.loads(text))
        else:
            log.warning("nothing publishes this yet", extra={"job_id": job.id, "key": key})

    # -- pieces ---------------------------------------------------------------------------------
    def gate_text(self, job: Job) -> str:
        """The open gate's comment: who it asks, what happened and the commands; a milestone's
        report comes with it (one comment per decision)."""
        gate = job.gate
        if gate is None:
            return ""
        parts = [asking_line(job), gate_prompt(job, voice=self.voice), retry_line(job, gate)]
        if gate.kind is Gate.MILESTONE:
            parts.append(render_card(job, fold_finished=False, voice=self.voice,
                                     link=self.commit_link, with_prompt=False))
        return "\n\n".join(part for part in parts if part) + self.center_link(job)

    def send_plan(self, job: Job) -> None:
        """Post or edit the current plan comment. A plan gate after the first one (a re-plan,
        a baseline that still fails) asks in a new comment where the conversation is, and the
        old plan comment says it was replaced; the queue comment says the job started."""
        server, gate = job.server, job.gate
        asking = gate if gate is not None and gate.kind is Gate.PLAN else None
        if server.comments.get("queue") and not server.queue_closed:
            self.upsert(job, job.number, "queue", QUEUE_DONE)
            server.queue_closed = True
        if asking is not None and server.plan_gate and server.plan_gate != asking.id \
                and server.comments.get(server.plan_key):
            where = f"#{self.thread(job)}" if self.thread(job) != job.number else "below"
            self.upsert(job, job.number, server.plan_key,
                        PLAN_SUPERSEDED.format(where=f"gate `{asking.id}`, {where}"))
            server.plan_key = plan_slot(asking.id)
        if asking is not None:
            server.plan_gate = asking.id
        number = job.number if server.plan_key == "plan" else self.thread(job)
        self.upsert(job, number, server.plan_key, self.plan_text(job))

    def thread(self, job: Job) -> int:
        """Where conversation goes: the PR once it exists, else the issue."""
        pull = job.server.pull
        return pull.number if pull is not None else job.number

    def card(self, job: Job, *, fold_finished: bool = True) -> str:
        return render_card(job, fold_finished=fold_finished, voice=self.voice,
                           link=self.commit_link) + self.center_link(job)

    def commit_link(self, sha: str) -> str:
        return f"{self.web_url}/{self.owner}/{self.name}/commit/{sha}"

    def center_link(self, job: Job) -> str:
        """The job's task center page (at the open gate's batch), when one is configured."""
        if not self.task_center_url:
            return ""
        batch = job.gate.batch if job.gate is not None else None
        anchor = f"#batch-{batch}" if batch is not None else ""
        return f"\n\n[Details in the task center]({self.task_center_url}/jobs/{job.id}{anchor})"

    def plan_text(self, job: Job) -> str:
        parts = [render_plan(job)]
        pull = job.server.pull
        if pull is not None:
            parts.append(f"Pull request: #{pull.number}")
            if not pull.draft:
                parts.append(NOT_DRAFT_NOTE)
        else:
            parts.append("The draft pull request opens with the first batch's commit.")
        if self.squash_only:
            parts.append(SQUASH_WARNING)
        if job.status is JobStatus.CANCELLED:
            parts.append(PLAN_CANCELLED)
        elif job.gate is not None and job.gate.kind is Gate.PLAN:
            parts = [part for part in (asking_line(job),) if part] + parts
            parts.append(gate_prompt(job, voice=self.voice))
        return "\n\n".join(parts) + self.center_link(job)

    def whole_text_at(self, job: Job) -> str:
        """Where a text cut to GitHub's limits can be read whole."""
        center = f"the task center ({self.task_center_url}/jobs/{job.id})" if self.task_center_url \
            else f"the task center (job `{job.id}`)"
        return f"the `Stepwise` check run's details and {center}"

    def pull_body(self, job: Job) -> str:
        tail = "\n\n".join([f"Closes nothing by itself: tracks #{job.number}.",
                             MERGE_ADVICE.format(revert=self.voice.usage("revert <batch>")),
                             marker(job, "card")])
        card = fit_chars(redact(self.card(job)), BODY_CHARS, reserve=len(tail) + 2,
                         where=self.whole_text_at(job))
        return f"{card}\n\n{tail}"

    def refresh_pull(self, job: Job) -> None:
        """Open the PR after the first commit; afterwards keep its body (the card) current."""
        if job.head_sha == job.base_sha:
            return  # GitHub refuses a pull request without commits
        pull = job.server.pull
        if pull is None:
            body = self.pull_body(job)
            opened, draft = self.client.create_pull(
                self.owner, self.name,
                title=fit_title(f"stepwise: {job.title}", f" (#{job.number})"),
                head=job.branch, base=job.base_branch, body=body)
            coalesce.remember(job, "card", body)
            job.server.pull = PullRequest(number=opened.number, node_id=opened.node_id,
                                          url=opened.html_url, draft=draft)
            self.assign_starter(job, opened.number)
            self.send_plan(job)
            return
        body = self.pull_body(job)
        if not coalesce.unchanged(job, "card", body):  # an edit only when the text changed
            self.client.update_pull_body(self.owner, self.name, pull.number, body)
            coalesce.remember(job, "card", body)

    def finish(self, job: Job) -> None:
        self.refresh_pull(job)
        pull = job.server.pull
        if job.status is JobStatus.COMPLETED and pull is not None and pull.draft:
            self.client.mark_ready(pull.node_id)
            pull.draft = False
            self.ask_review(job, pull.number)
        ended_unplanned = job.status is JobStatus.COMPLETED and not job.batches
        if (job.status is JobStatus.CANCELLED or ended_unplanned) \
                and job.server.comments.get(job.server.plan_key):
            self.send_plan(job)  # no "to start the job" left standing (nothing to do: says so)
        head = closing_head(job)
        card = "" if ended_unplanned else f"\n\n{self.card(job, fold_finished=False)}"
        self.upsert(job, job.number, "summary", head + card)

    def assign_starter(self, job: Job, number: int) -> None:
        """Assign the pull request to the person who started the job: it subscribes them to
        the conversation, where every later gate is asked."""
        if job.server.started_by:
            self.best_effort(job, "assign the pull request", lambda: self.client.add_assignees(
                self.owner, self.name, number, [job.server.started_by]))

    def ask_review(self, job: Job, number: int) -> None:
        """Ready for review: request the starter's review."""
        if job.server.started_by:
            self.best_effort(job, "request a review", lambda: self.client.request_reviewers(
                self.owner, self.name, number, [job.server.started_by]))

    def best_effort(self, job: Job, what: str, call: Callable[[], None]) -> None:
        """A courtesy call whose failure costs only the courtesy (never a permanent fault)."""
        try:
            call()
        except ForgeError as exc:
            if exc.retry_class is RetryClass.DO_NOT_RETRY and exc.code == "repository_gone":
                raise
            log.warning("could not %s", what, extra={"job_id": job.id, "code": exc.code})

    def reply(self, job: Job | None, number: int, key: str, text: str) -> None:
        """A one-off answer (refusals, status, help), posted once per `key` (without a job, the
        marker names the issue: a retried event finds its earlier answer)."""
        if job is None:
            tag = f"<!-- stepwise:issue-{number}:{key} -->" if key else None
            body = fit_chars(redact(text), BODY_CHARS, reserve=len(tag or "") + 2) + (
                f"\n\n{tag}" if tag else "")
            found = self.client.find_comment(self.owner, self.name, number, tag) if tag else None
            if found is not None:
                self.client.update_comment(self.owner, self.name, found.id, body)
                return
            self.client.create_comment(self.owner, self.name, number, body, marker=tag)
        else:
            self.upsert(job, number, key, text)

    def upsert(self, job: Job, number: int, key: str, text: str) -> None:
        """Edit the comment carrying this marker, or post it once."""
        tag = marker(job, key)
        fitted = fit_chars(redact(text), BODY_CHARS, reserve=len(tag) + 2, where=self.whole_text_at(job))
        body = f"{fitted}\n\n{tag}"
        known = job.server.comments
        comment_id = known.get(key)
        if comment_id is not None and self.client.update_comment(self.owner, self.name,
                                                                 comment_id, body):
            return
        for comment in self.client.comments(self.owner, self.name, number):
            if comment.is_bot and tag in comment.body:
                self.client.update_comment(self.owner, self.name, comment.id, body)
                known[key] = comment.id
                return
        known[key] = self.client.create_comment(self.owner, self.name, number, body,
                                                marker=tag).id

    # -- the repository's CI: the Checks, Statuses and Actions APIs (bot/github/ci.py) ---------
    def ci(self) -> RepositoryCi:
        return RepositoryCi(self.client, f"{self.owner}/{self.name}")

    def ci_report(self, job: Job, sha: str) -> CiReport | None:
        """The checks on `sha` and what the base requires of the repository's CI: a protection
        that requires Stepwise's own `Stepwise` check (to hold merges until the job is done) is
        not a check the job can wait for, so it is left out (RepositoryCi.required); Stepwise's
        own runs are told by the App's id (`own_app_id`)."""
        ci = self.ci()
        required = ci.required(job.base_branch)
        return CiReport(observed=(*ci.check_runs(sha), *ci.statuses(sha)),
                        protected=required.names, strict=required.strict,
                        own_app_id=self.client.app.app_id)

    def ci_failures(self, job: Job, sha: str,
                    failing: Sequence[CheckObservation]) -> list[CiFailure]:
        return ci_failures(self.ci(), failing)

    def rerun_checks(self, job: Job, sha: str,
                     checks: Sequence[CheckObservation]) -> list[RerunRefused]:
        asked, refused = self.ci().rerun(checks)
        log.info("asked CI to run checks again", extra={
            "job_id": job.id, "sha": sha, "asked": asked,
            "refused": [r.check.name for r in refused]})
        return refused

    def publish_check_run(self, job: Job, draft: CheckRunDraft) -> None:
        """Owe the run under `check:<external id>` (with its body, so the reconciler can publish
        it from the record alone), then create or update it; a fault leaves it owed."""
        if self.task_center_url and not draft.details_url:  # "Details" opens the task center
            batch = draft.external_id.rpartition(":batch:")[2] if ":batch:" in draft.external_id else ""
            draft = dataclasses.replace(draft, details_url=f"{self.task_center_url}/jobs/"
                                        f"{job.id}" + (f"#batch-{batch}" if batch else ""))
        key = f"{outbox.CHECK_PREFIX}{draft.external_id}"
        outbox.owe(job, key, Publication.CHECK_RUN.value, now=self.clock(),
                   text=json.dumps(draft.payload()), retry_refused=True)
        self.deliver(job, key)


__all__ = ["ForgeError", "GitHubForge", "marker"]

