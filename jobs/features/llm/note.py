"""What the plan and the change note say of the model (pure): the plan's "Model edits" line
(the edit format the job plans with) and the note's "Model usage" section (the model's calls and
tokens, per batch with where its transcripts are kept)."""

from __future__ import annotations

from jobs.basics import markdown_safe as md
from jobs.features.llm.usage import usage
from jobs.kernel.feature_parts import CardSection, NoteSection, NoteSlot
from jobs.kernel.job import Job


def _calls(count: int) -> str:
    return f"{count} model call{'' if count == 1 else 's'}"


def model_usage(job: Job) -> list[str]:
    """The note's "Model usage" section (recipe llm): calls and tokens, per batch with where
    its transcripts are kept; nothing for jobs that made no model call."""
    spent = usage(job)
    if not spent.calls:
        return []
    lines = ["", "## Model usage", "",
             f"- {_calls(spent.calls)}: {spent.tokens_in:,} tokens in, {spent.tokens_out:,} out"
             + (f"; the token budget was granted {spent.budget_grants} more time(s)"
                if spent.budget_grants else "")]
    for batch in job.batches:
        calls = [c for a in batch.attempts for c in a.llm_calls]
        if not calls:
            continue
        tokens = sum(c.tokens_in + c.tokens_out for c in calls)
        kept = [a.transcript for a in batch.attempts if a.transcript]
        lines.append(f"- batch {batch.number}: {_calls(len(calls))}, {tokens:,} tokens"
                     + (f"; transcripts {', '.join(f'`{t}`' for t in kept)}" if kept else ""))
    return lines


MODEL_USAGE = NoteSection(NoteSlot.AFTER_LEFT_OUT, model_usage)


def model_edits_lines(job: Job) -> list[str]:
    """The plan's "Model edits" line: the edit format the job plans with (none before it is
    chosen, and for jobs that do not call the model)."""
    edit_format = usage(job).edit_format
    if not edit_format:
        return []
    return [f"- Model edits: {md.code(edit_format)}" + (
        " (tool calls; `search_replace` blocks if the model server refuses tools)"
        if edit_format == "tools" else "")]


MODEL_EDITS = CardSection(plan=model_edits_lines)
