"""Feedback for the model's next round: what the engine refused, named precisely."""

from __future__ import annotations

from collections.abc import Sequence

from jobs.decisions.guard import GuardVerdict
from jobs.kernel.records import CommandEvidence

TAIL_LINES = 60
TAIL_CHARS = 4000  # a failed command's output tail given back, at most
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


def output_tail(failed: CommandEvidence) -> str:
    """The end of a failed command's output, capped: the last TAIL_LINES lines and at most
    TAIL_CHARS characters (a cut says how much was left out)."""
    lines = failed.output_tail.rstrip().splitlines()[-TAIL_LINES:]
    text = "\n".join(lines)
    if len(text) > TAIL_CHARS:
        text = f"[… {len(text) - TAIL_CHARS:,} characters left out]\n" + text[-TAIL_CHARS:]
    return text


def command_words(evidence: CommandEvidence) -> str:
    """"`python -m pytest -q` exited 1 (timed out)": one command and its exit code."""
    return f"`{evidence.display}` exited {evidence.exit_code}" + \
        (" (timed out)" if evidence.timed_out else "")


def commands_ran(evidence: Sequence[CommandEvidence], failure: CommandEvidence | None, *,
                 kind: str, planned: Sequence[str]) -> str:
    """Every check command the candidate met, each with its exit code, in order: a failed setup
    command (then no validation command ran), or the validation commands run, and those a
    failure left unrun (`planned`: the config's `validate`)."""
    if kind == "setup_failed" and failure is not None:
        return f"setup {command_words(failure)}, so no validation command ran"
    if not planned:
        return "no validation command is configured (`validate` is empty)"
    said = "; ".join(command_words(c) for c in evidence)
    unrun = list(planned[len(evidence):]) if failure is not None else []
    if unrun:
        said += "; not run after that failure: " + ", ".join(f"`{c}`" for c in unrun)
    return said


def command_feedback(failed: CommandEvidence, kind: str) -> str:
    """A failing check with its output tail."""
    what = "a setup command" if kind == "setup_failed" else "validation"
    return (f"Your diff applied and passed the guard, but {what} failed: "
            f"{command_words(failed)}. Output tail:\n```\n{output_tail(failed)}"
            "\n```\nFix the code (not the tests) and send the whole corrected diff against the "
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
