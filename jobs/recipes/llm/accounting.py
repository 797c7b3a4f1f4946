"""Accounting for model calls: the token budget, and transcripts (the `budget` gate itself and
its grants: jobs/features/llm/budget.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from jobs.basics.redact import redact
from jobs.kernel.records import ModelCall
from jobs.recipes.llm.client import ChatReply, Message

ARTIFACTS = "artifacts"
BUDGET_HINT = "approve to grant one more budget of {budget:,} tokens, skip the batch, or cancel"


def allowance(token_budget: int, grants: int) -> int:
    """Tokens a job may spend: its budget, once more per approval of the `budget` gate."""
    return token_budget * (1 + grants)


def budget_reason(used: int, token_budget: int, grants: int) -> str:
    return (f"the job has spent {used:,} tokens of its {allowance(token_budget, grants):,}-token "
            f"budget (STEPWISE_LLM_TOKEN_BUDGET={token_budget:,}"
            + (f", granted {grants} more time(s)" if grants else "") + ")")


def call_record(reply: ChatReply, *, round_number: int, files: Sequence[str]) -> ModelCall:
    return ModelCall(model=reply.model, round=round_number, files=list(files),
                     tokens_in=reply.tokens_in, tokens_out=reply.tokens_out,
                     latency_s=reply.latency_s, finish_reason=reply.finish_reason)


def transcript_path(state_dir: Path, number: int, batch: int, attempt: int) -> Path:
    return state_dir / ARTIFACTS / f"issue-{number}" / f"batch-{batch}-attempt-{attempt}.md"


def prune(root: Path, *, older_than_days: float) -> int:
    """Delete transcripts under `root` older than the given age (server mode sets an expiry)."""
    cutoff = time.time() - older_than_days * 86400
    removed = 0
    for path in root.glob("*/*.md") if root.is_dir() else []:
        if path.stat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


class Transcript:
    """A Markdown transcript of one attempt's model calls, rewritten after every change."""

    def __init__(self, path: Path | None, *, title: str, secrets: Sequence[str] = (),
                 ttl_days: float | None = None) -> None:
        self.path = path
        self.title = title
        self.secrets = tuple(secrets)
        self.ttl_days = ttl_days
        self.entries: list[tuple[ModelCall, list[Message], str]] = []

    def add(self, call: ModelCall, sent: Sequence[Message], answer: str) -> None:
        """A call: the messages new to its conversation, and the answer."""
        self.entries.append((call, list(sent), answer))
        self.write()

    def write(self) -> None:
        """Write the file (every call's outcome as it stands now), redacted."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.ttl_days is not None:
            prune(self.path.parent.parent, older_than_days=self.ttl_days)
        parts = [f"# {self.title}\n"]
        for index, (call, sent, answer) in enumerate(self.entries, 1):
            parts.append(_call_header(index, call))
            parts += [f"### {m['role']}\n\n{_fenced(m['content'])}\n" for m in sent]
            parts.append(f"### assistant\n\n{_fenced(answer)}\n")
        self.path.write_text(redact("\n".join(parts), secrets=self.secrets), encoding="utf-8")


def _call_header(index: int, call: ModelCall) -> str:
    detail = f" — {call.detail}" if call.detail else ""
    return (f"## Call {index}: round {call.round}, {', '.join(call.files)}\n\n"
            f"model `{call.model}` · {call.tokens_in} tokens in / {call.tokens_out} out · "
            f"{call.latency_s:.2f} s · finish_reason `{call.finish_reason}` · outcome "
            f"**{call.outcome}**{detail}\n")


def _fenced(text: str) -> str:
    fence = "````"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"
