"""Pieces of the plan and the change note: commands in words, left-out files, reverts, retries."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from jobs.basics import markdown_safe as md
from jobs.decisions.network_failure import NetworkCause, network_cause
from jobs.inputs.batch_sizes import batch_size_limit, is_auto
from jobs.kernel.job import Batch, Job
from jobs.kernel.model import BatchStatus, batch_statuses
from jobs.kernel.records import CommandEvidence
from jobs.notes.annotations import annotations_from_output, choose_tail


def plural(count: int, noun: str) -> str:
    suffix = "" if count == 1 else ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count} {noun}{suffix}"


def short(sha: str | None) -> str:
    return sha[:7] if sha else "—"


def command_line(evidence: CommandEvidence) -> str:
    suffix = f" (timed out after {evidence.duration_s:.0f} s; `command_timeout` in " \
        ".github/stepwise.yml sets the limit)" if evidence.timed_out else ""
    return f"{md.code(evidence.display)} → exit {evidence.exit_code}{suffix}"


def output_block(evidence: CommandEvidence, *, lines: int = 15) -> list[str]:
    """At most `lines` lines of a command's output tail as a fenced block (none: no block): the
    failing test's report and the last lines when the runner printed one (annotations.py)."""
    tail = choose_tail(evidence.output_tail.rstrip().splitlines(), limit=lines)
    if not tail:
        return []
    return [f"Output of {md.code(evidence.display)} (last {len(tail)} lines):", "",
            *md.block_lines(tail)]


def baseline_failure(job: Job) -> str:
    """Why the baseline does not pass, in one sentence (for gates and notices): the network's
    part first when the network is the cause (jobs/decisions/network_failure.py)."""
    failing = next((c for c in job.baseline if c.exit_code != 0 or c.timed_out), None)
    where = short(job.baseline_sha or job.base_sha)
    if failing is None:
        return f"the baseline validation fails on `{where}`"
    cause = baseline_network_cause(job)
    if cause is not None:
        return (f"{cause.what}; {cause.fix}. So the baseline validation fails on `{where}` "
                f"({command_line(failing)})")
    return (f"the baseline validation fails on `{where}` ({command_line(failing)}): no batch "
            "can pass validation until the base passes it")


def baseline_network_cause(job: Job) -> NetworkCause | None:
    """The network's part in the baseline's failure (setup's, or a validation command's)."""
    failing = next((c for c in job.baseline if c.exit_code != 0 or c.timed_out), None)
    if failing is None:
        return None
    who = "setup" if failing.argv in job.config.setup_argvs() else "validation"
    return network_cause(failing, who=who)


def batch_commands(batch: Batch, codemod: str | None = None) -> str:
    """The last attempt's commands; the codemod `codemod` (a `command` job's `run`) in words."""
    attempt = batch.last_attempt
    if attempt is None or not attempt.commands:
        return "—"
    return "; ".join(codemod_words(cmd) if codemod is not None and cmd.argv[:1] == [codemod]
                     and index == 0 else network_first(cmd)
                     for index, cmd in enumerate(attempt.commands))


def network_first(evidence: CommandEvidence) -> str:
    """A command in words, led by the network's part when that is why it failed."""
    cause = network_cause(evidence, who="validation")
    return command_line(evidence) if cause is None else f"{cause.what}: {command_line(evidence)}"


def codemod_words(evidence: CommandEvidence) -> str:
    """What a codemod reported, in words: its exit code is evidence, not the verdict."""
    lines = plural(evidence.output_lines, "line")
    said = last_words(evidence.output_tail)
    said = f", last: {md.code(said)}" if said else ""
    if evidence.exit_code == 0:
        return f"{md.code(evidence.display)} ran cleanly ({lines} of output{said})"
    return f"{md.code(evidence.display)} exited {evidence.exit_code} ({lines} of output{said})"


def last_words(tail: str, limit: int = 120) -> str:
    line = next((ln.strip() for ln in reversed(tail.splitlines()) if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


_PATH_LINE = re.compile(r"(.+?):(\d+)(.*)", re.S)


def target_key(item: str) -> tuple[str, int, str]:
    """Sort `path:line[...]` by file, then by line number as a number (`a.py:9` before
    `a.py:10`), then by what follows."""
    match = _PATH_LINE.fullmatch(item)
    if match is None:
        return (item, 0, "")
    return (match.group(1), int(match.group(2)), match.group(3))


def kept_label(kept: Sequence[Batch]) -> str:
    tally = Counter(b.status for b in kept)
    counts = ", ".join(f"{tally[status]} {status}" for status in batch_statuses() if tally[status])
    files = sum(len(b.files) for b in kept)
    return f"{plural(len(kept), 'batch')} ({counts}; {plural(files, 'file')})"


def code_label(files: Sequence[str], limit: int = 3) -> str:
    """Like files_label, each path as a code span so Markdown shows it verbatim."""
    shown = md.codes(files[:limit])
    return shown if len(files) <= limit else f"{shown} and {len(files) - limit} more"


LEFT_OUT_LINES = 30


def left_out_lines(job: Job) -> list[str]:
    """The files of `paths` the plan left out, each with the rule that excludes it."""
    if not job.left_out:
        return []
    lines = ["", f"Left out ({plural(len(job.left_out), 'file')} in `paths` no batch may edit):"]
    lines += [f"- {md.code(item.path)} — {md.message(item.rule)}"
              for item in job.left_out[:LEFT_OUT_LINES]]
    if len(job.left_out) > LEFT_OUT_LINES:
        lines.append(f"- … and {len(job.left_out) - LEFT_OUT_LINES} more")
    return lines


def shown_files(batch: Batch) -> list[str]:
    """A committed batch lists the files it changed; others list the files planned for it."""
    if batch.commit and batch.changed_files:
        return batch.changed_files
    return batch.files


def reverted_lines(job: Job) -> list[str]:
    chosen = [b for b in job.batches if b.status is BatchStatus.REVERTED]
    if not chosen:
        return []
    lines = ["", "## Reverted", ""]
    for batch in chosen:
        line = f"- batch {batch.number}: {md.message(batch.reason or 'no reason given')}"
        if batch.revert_ok is not None:
            verdict = "passes" if batch.revert_ok else "does NOT pass"
            checks = "; ".join(command_line(c) for c in batch.revert_commands) or \
                "no validation commands configured"
            line += f"; the head after the revert (`{short(batch.revert_commit)}`) " \
                f"{verdict} validation ({checks})"
        lines.append(line)
    return lines


def passed_after_failing(job: Job) -> list[str]:
    """Attempts that failed before a later attempt of the same batch passed (flaky checks?),
    each with its evidence: the failing command, its exit code and its last output line."""
    lines: list[str] = []
    for batch in job.batches:
        if batch.status is not BatchStatus.COMPLETED:
            continue
        for attempt in batch.attempts[:-1]:
            if attempt.error is None:
                continue
            evidence = attempt.error.evidence
            command, code = evidence.get("command"), evidence.get("exit_code")
            ran = f"; {md.code(command)} → exit {code}" if isinstance(command, str) else ""
            tail = evidence.get("output_tail")
            said = last_words(tail) if isinstance(tail, str) else ""
            lines.append(f"- batch {batch.number}, attempt {attempt.number}: "
                         f"`{attempt.error.code}` — {cell(attempt.error.message)}{ran}"
                         + (f", last output: “{cell(said)}”" if said else ""))
    if not lines:
        return []
    return ["", "## Attempts that failed before passing", "",
            "A later attempt of the same batch passed; a check that fails and then passes on "
            "the same change may be flaky.", "", *lines]


def cell(text: str) -> str:
    """Untrusted text for one table cell (or list item) line: code spans kept, the rest
    literal (jobs/basics/markdown_safe.py)."""
    return md.message(text.replace("\n", " "), in_table=True)


_FINDING = re.compile(r"^(?:\./)?(?P<path>[^\s:][^:\n]*?):(?P<line>\d+)(?::\d+)?:?\s*(?P<text>.*)$",
                      re.M)


def codemod_findings(tail: str, files: Sequence[str], *, roots: Sequence[str] = ()) -> list[str]:
    """The findings a codemod printed for `files` (from its output tail), as leftovers
    `path:line — message`: what it reported but did not fix. Read in the formats of
    jobs/notes/annotations.py (ruff full and concise, eslint stylish and unix, tsc, mypy,
    flake8); absolute paths under `roots` (the sandbox's view of the repository) are made
    repository-relative."""
    wanted = set(files)
    found: dict[str, None] = {}
    for note in annotations_from_output(tail, is_repo_file=wanted.__contains__, roots=roots):
        found[f"{note.path}:{note.line} — {note.message}"] = None
    if not found:  # a `path:line text` form the formats above do not know
        for match in _FINDING.finditer(tail):
            if match["path"] in wanted:
                text = match["text"].strip()
                found[f"{match['path']}:{match['line']}" + (f" — {text}" if text else "")] = None
    return sorted(found, key=target_key)


def codemod_summary(evidence: CommandEvidence, *, changed: Sequence[str], planned: int,
                    findings: int, deleted: Sequence[str] = (),
                    changed_exit_codes: Sequence[int] = ()) -> str:
    """A `command` batch in words: what the codemod changed (and deleted) and what it
    reported. A non-zero exit is read only as far as what happened says: findings it printed,
    or an exit the spec's `changed_exit_codes` says means it rewrote files (as pyupgrade's 1),
    else the bare exit code and whether it changed files."""
    edited = len(changed) - len(deleted)
    what = f"{md.code(evidence.display)} changed {plural(edited, 'file')} of {planned}"
    if deleted:
        what = (f"{md.code(evidence.display)} changed {plural(edited, 'file')} and deleted "
                f"{len(deleted)} ({md.codes(deleted[:5])}{', …' if len(deleted) > 5 else ''}) "
                f"of {planned}")
    code = evidence.exit_code
    if code == 0:
        return f"{what}; it reported no problem"
    if findings:
        return (f"{what}; it reported {plural(findings, 'finding')} it did not fix (listed as "
                f"leftovers), exit {code}")
    if code in changed_exit_codes:
        return f"{what}; exit {code}, which `changed_exit_codes` says means it rewrote files"
    if changed:
        return (f"{what}; it exited {code} and printed no `path:line` finding (a codemod that "
                f"exits {code} when it rewrites files can say so: `changed_exit_codes: [{code}]`)")
    return f"{what}; it exited {code} and printed no `path:line` finding (see its output)"


def artifact_lines(evidence: Mapping[str, object]) -> list[str]:
    """Where a failed attempt's whole output and diff are kept, when they were."""
    log, diff = evidence.get("output_log"), evidence.get("attempt_diff")
    if not isinstance(log, str) or not isinstance(diff, str):
        return []
    return [f"Full output: {md.code(log)}; the attempted diff: {md.code(diff)}"]


def failed_attempt_files(job: Job) -> list[str]:
    """Where each failed validation's whole output and attempted diff are kept (local paths:
    under `.git/stepwise/` locally, the worker's artifacts in server mode)."""
    lines = [f"- batch {batch.number}, attempt {attempt.number}: "
             + ", ".join(md.code(path) for path in attempt.artifacts)
             for batch in job.batches for attempt in batch.attempts if attempt.artifacts]
    if not lines:
        return []
    return ["", "## Failed attempts' output and diffs", "", *lines]


def batch_size_words(job: Job) -> str:
    """The plan's words for the batch size: a number, or how `auto` sizes batches."""
    spec, config = job.spec, job.config
    if is_auto(spec.batch_size, config.batch_size):
        limit = batch_size_limit(spec.batch_size_max, config.batch_size_max)
        return (f"batch size auto: starts at 2, doubles after a passing batch, halves after a "
                f"failure, at most {limit}; batches not started are regrouped as it changes")
    return f"batch size {spec.batch_size if spec.batch_size is not None else config.batch_size}"
