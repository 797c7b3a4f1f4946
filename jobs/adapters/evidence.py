"""Conversions from sandbox results to the evidence recorded in the job."""

from __future__ import annotations

from jobs.basics.redact import redact
from jobs.inputs.sandboxing import CommandResult
from jobs.kernel.records import CommandEvidence


def command_evidence(result: CommandResult) -> CommandEvidence:
    """The record of one command; its output tail is redacted (a command may print a token)."""
    return CommandEvidence(
        argv=list(result.argv),
        exit_code=result.exit_code,
        duration_s=round(result.duration_s, 3),
        output_tail=redact(result.output_tail),
        output_lines=result.output_lines,
        timed_out=result.timed_out,
        isolated=result.isolated,
        egress=list(result.egress),
    )
