"""Stepwise's own check runs, rendered from data (pure): `Stepwise / batch K` on each batch
commit, with the validation evidence, and `Stepwise` on the pull request head, which says what
the job waits for, so branch protection can require a finished job.

Each draft carries an external id (`<job>:batch:<k>`, `<job>:job`): the adapter finds the run it
made before by it and updates it, so a retried or repeated publication never makes a second run.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from jobs.basics import markdown_safe as md
from jobs.basics.github_limits import (
    ANNOTATIONS_PER_RUN,
    CHECK_OUTPUT_BYTES,
    CHECK_TITLE_CHARS,
    cut_chars,
    fit_bytes,
)
from jobs.notes.annotations import Annotation

JOB_CHECK_NAME = "Stepwise"
WHOLE_OUTPUT_AT = "the job's record in the task center and the change note"


class Evidence(Protocol):
    """What a validation command left (jobs.kernel.records.CommandEvidence has these fields)."""

    argv: list[str]
    exit_code: int
    duration_s: float
    output_tail: str
    timed_out: bool


class JobCheckState(StrEnum):
    WORKING = "working"
    AT_GATE = "at_gate"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True)
class CheckRunDraft:
    """A check run as Stepwise wants it to be; `payload()` is the REST body."""

    name: str
    head_sha: str
    external_id: str
    status: str  # queued | in_progress | completed
    conclusion: str | None
    title: str
    summary: str
    text: str = ""
    annotations: tuple[Annotation, ...] = field(default=())
    details_url: str = ""

    def payload(self) -> dict[str, Any]:
        output: dict[str, Any] = {
            "title": cut_chars(self.title, CHECK_TITLE_CHARS),
            "summary": fit_bytes(self.summary, CHECK_OUTPUT_BYTES, where=WHOLE_OUTPUT_AT)}
        if self.text:
            output["text"] = fit_bytes(self.text, CHECK_OUTPUT_BYTES, where=WHOLE_OUTPUT_AT)
        if self.annotations:  # 50 a request: bot/github/check_run_publish.py sends them in chunks
            output["annotations"] = [_annotation(a) for a in self.annotations[:ANNOTATIONS_PER_RUN]]
        body: dict[str, Any] = {"name": self.name, "head_sha": self.head_sha,
                                "external_id": self.external_id, "status": self.status,
                                "output": output}
        if self.conclusion is not None:
            body["conclusion"] = self.conclusion
        if self.details_url:
            body["details_url"] = self.details_url
        return body


def batch_check_name(number: int) -> str:
    return f"{JOB_CHECK_NAME} / batch {number}"


def batch_check(*, job_id: str, number: int, total: int, files: Sequence[str], head_sha: str,
                commands: Sequence[Evidence], earlier_failures: Sequence[Evidence] = (),
                annotations: Sequence[Annotation] = (), details_url: str = "",
                evidence: Sequence[str] = ()) -> CheckRunDraft:
    """The run on batch `number`'s commit: the commands that validated it, the failed attempts
    before (with their annotations, as warnings: they were fixed by this commit) and the
    features' `evidence` lines (changed lines run by the tests, edit shapes, ...)."""
    passed = all(item.exit_code == 0 and not item.timed_out for item in commands)
    noun = "file" if len(files) == 1 else "files"
    title = (f"Batch {number}/{total} validated: {len(commands)} "
             f"{'command' if len(commands) == 1 else 'commands'} passed" if passed
             else f"Batch {number}/{total}: validation failed")
    summary = [f"Batch {number} of {total}: {len(files)} {noun}.", "",
               "| command | exit | took |", "|---|---:|---:|"]
    summary += [_row(item) for item in commands]
    if earlier_failures:
        summary += ["", f"{len(earlier_failures)} earlier failed "
                    f"{'attempt' if len(earlier_failures) == 1 else 'attempts'} before this one:",
                    "", "| command | exit | took |", "|---|---:|---:|"]
        summary += [_row(item) for item in earlier_failures]
    if evidence:
        summary += ["", *evidence]
    text = "\n\n".join(_tail(item) for item in [*commands, *earlier_failures] if item.output_tail)
    files_list = "\n".join(f"- {md.code(path)}" for path in files[:200])
    return CheckRunDraft(
        name=batch_check_name(number), head_sha=head_sha, external_id=f"{job_id}:batch:{number}",
        status="completed", conclusion="success" if passed else "failure", title=title,
        summary="\n".join(summary) + f"\n\nFiles:\n{files_list}", text=text,
        annotations=tuple(annotations), details_url=details_url)


def job_check(*, job_id: str, head_sha: str, state: JobCheckState, headline: str,
              command: str = "", meaning: str = "", card: str = "",
              annotations: Sequence[Annotation] = (), details_url: str = "",
              evidence: Sequence[str] = ()) -> CheckRunDraft:
    """The run on the pull request head: in progress while working, `action_required` at a
    gate (naming the exact command that answers it), success when the job completed; the
    features' `evidence` lines follow the headline."""
    status, conclusion = {
        JobCheckState.WORKING: ("in_progress", None),
        JobCheckState.AT_GATE: ("completed", "action_required"),
        JobCheckState.DONE: ("completed", "success"),
        JobCheckState.CANCELLED: ("completed", "cancelled"),
        JobCheckState.FAILED: ("completed", "failure"),
    }[state]
    summary = headline
    if evidence:
        summary += "\n\n" + "\n".join(evidence)
    if command:
        summary += f"\n\nTo continue, comment:\n\n{md.block(command)}"
        if meaning:
            summary += f"\n\nThat command will {meaning}."
    return CheckRunDraft(name=JOB_CHECK_NAME, head_sha=head_sha, external_id=f"{job_id}:job",
                         status=status, conclusion=conclusion, title=headline.split("\n")[0],
                         summary=summary, text=card, annotations=tuple(annotations),
                         details_url=details_url)


def _row(item: Evidence) -> str:
    exit_text = "timed out" if item.timed_out else str(item.exit_code)
    return f"| {md.code(shlex.join(item.argv), in_table=True)} | {exit_text} | " \
        f"{item.duration_s:.1f} s |"


def _tail(item: Evidence) -> str:
    return f"{md.code(shlex.join(item.argv))} (exit {item.exit_code}):\n{md.block(item.output_tail)}"


def _annotation(item: Annotation) -> dict[str, Any]:
    body: dict[str, Any] = {"path": item.path, "start_line": item.line, "end_line": item.line,
                            "annotation_level": item.level, "message": item.message}
    if item.title:
        body["title"] = item.title[:255]
    return body
