"""`stepwise llm-report`: a job's model work as statistics (pure): calls, tokens and rounds per
committed file, tool calls and their failure rate by tool and by error kind, and the decision
log (each edit's one-line reason)."""

from __future__ import annotations

from collections import Counter

from jobs.kernel.job import Job
from jobs.kernel.model import BatchStatus
from jobs.kernel.records import ModelCall

MAX_DECISIONS = 40


def _rate(failed: int, total: int) -> str:
    return f"{failed}/{total} ({failed / total:.0%})" if total else "0/0"


def _per(value: float, files: int) -> str:
    return f"{value / files:,.1f}" if files else "—"


def llm_statistics(job: Job) -> str:
    """The report of one job, as Markdown."""
    calls: list[ModelCall] = [c for b in job.batches for a in b.attempts for c in a.llm_calls]
    committed = sum(len(b.changed_files or b.files) for b in job.batches
                    if b.status is BatchStatus.COMPLETED and b.commit)
    tokens = sum(c.tokens_in + c.tokens_out for c in calls)
    rounds = len(calls)
    lines = [f"# Model report: #{job.number} {job.title}", "",
             f"- model calls (rounds or turns): {rounds}; tokens: {tokens:,} "
             f"({sum(c.tokens_in for c in calls):,} in, {sum(c.tokens_out for c in calls):,} "
             "out)",
             f"- committed files: {committed}; rounds per committed file: "
             f"{_per(rounds, committed)}; tokens per committed file: {_per(tokens, committed)}",
             f"- attempts: {sum(len(b.attempts) for b in job.batches)}; failed: "
             f"{sum(1 for b in job.batches for a in b.attempts if a.error is not None)}"]
    outcomes = Counter(c.outcome for c in calls)
    if outcomes:
        lines += ["", "## Call outcomes", "", "| outcome | calls |", "|---|---|"]
        lines += [f"| {name} | {count} |" for name, count in outcomes.most_common()]
    uses = [use for c in calls for use in c.tools]
    if uses:
        by_tool: dict[str, list[int]] = {}
        for use in uses:
            counts = by_tool.setdefault(use.name, [0, 0])
            counts[0] += 1
            counts[1] += bool(use.error)
        lines += ["", "## Tool calls by tool", "", "| tool | calls | failed |", "|---|---|---|"]
        lines += [f"| {name} | {total} | {_rate(failed, total)} |"
                  for name, (total, failed) in sorted(by_tool.items())]
        kinds = Counter((use.error, use.severity) for use in uses if use.error)
        lines += ["", "## Failures by error kind", "", "| error | severity | count | share |",
                  "|---|---|---|---|"]
        lines += [f"| {kind} | {severity} | {count} | {count / len(uses):.0%} |"
                  for (kind, severity), count in kinds.most_common()] or ["| none | | 0 | 0% |"]
        decisions = [f"- batch {b.number}, attempt {a.number}: `{use.path}` — {use.reason}"
                     for b in job.batches for a in b.attempts for c in a.llm_calls
                     for use in c.tools if use.reason and not use.error]
        if decisions:
            lines += ["", "## Decision log (each edit's reason)", "", *decisions[:MAX_DECISIONS]]
            if len(decisions) > MAX_DECISIONS:
                lines.append(f"- … {len(decisions) - MAX_DECISIONS} more")
    if not calls:
        lines += ["", "This job made no model call."]
    return "\n".join(lines) + "\n"
