"""Feedback for the model's next round: what the engine refused, named precisely."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.decisions.guard import GuardVerdict
from jobs.kernel.records import CommandEvidence

TAIL_LINES = 60
UNCHANGED = ("Your diff applied but changed nothing (every change cancelled out). Send the "
             "change the goal asks for.")
NO_DIFF = ("Your answer held no ```diff block. Answer with one ```diff block holding a unified "
           "diff, then one `SUMMARY <path>: ...` line per changed file.")


def truncated(max_tokens: int) -> str:
    return (f"Your answer was cut off at the output limit ({max_tokens} tokens) before the diff "
            "was complete, so nothing of it was applied. Send a shorter diff: only the hunks "
            "needed, with up to 3 lines of context each.")


def guard_feedback(verdict: GuardVerdict, batch_files: Sequence[str]) -> str:
    """A guard refusal naming each rule and file."""
    return ("The diff guard refused your change:\n" + verdict.describe() + "\n\nChange only "
            f"the batch's files ({', '.join(batch_files)}); no tests, manifests, CI or secrets, "
            "no new, deleted or renamed files. Send the whole corrected diff.")


def command_feedback(failed: CommandEvidence, kind: str) -> str:
    """A failing check with its output tail."""
    lines = failed.output_tail.rstrip().splitlines()[-TAIL_LINES:]
    what = "a setup command" if kind == "setup_failed" else "validation"
    timed = " (timed out)" if failed.timed_out else ""
    return (f"Your diff applied and passed the guard, but {what} failed: `{failed.display}` "
            f"exited {failed.exit_code}{timed}. Output tail:\n```\n" + "\n".join(lines)
            + "\n```\nFix the code (not the tests) and send the whole corrected diff against the "
            "original files.")


def targets_feedback(left: Sequence[str]) -> str:
    shown = ", ".join(left[:20]) + (f" and {len(left) - 20} more" if len(left) > 20 else "")
    return (f"Your diff passed validation, but {len(left)} target(s) still match the job's "
            f"`find` patterns: {shown}. Change those too and send the whole diff against the "
            "original files.")


def previous_attempt(message: str, tail: object) -> str:
    """Why the previous attempt failed, with the output tail when there is one."""
    if isinstance(tail, str) and tail.strip():
        lines = tail.rstrip().splitlines()[-TAIL_LINES:]
        return message + "\nOutput tail:\n```\n" + "\n".join(lines) + "\n```"
    return message
