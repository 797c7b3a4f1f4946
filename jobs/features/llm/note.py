"""The change note's "Model usage" section (pure): the model's calls and tokens, per batch with
where its transcripts are kept."""

from __future__ import annotations

from jobs.kernel.feature_parts import NoteSection, NoteSlot
from jobs.kernel.job import Job


def _calls(count: int) -> str:
    return f"{count} model call{'' if count == 1 else 's'}"


def model_usage(job: Job) -> list[str]:
    """The note's "Model usage" section (recipe llm): calls and tokens, per batch with where
    its transcripts are kept; nothing for jobs that made no model call."""
    usage = job.llm
    if not usage.calls:
        return []
    lines = ["", "## Model usage", "",
             f"- {_calls(usage.calls)}: {usage.tokens_in:,} tokens in, {usage.tokens_out:,} out"
             + (f"; the token budget was granted {usage.budget_grants} more time(s)"
                if usage.budget_grants else "")]
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
