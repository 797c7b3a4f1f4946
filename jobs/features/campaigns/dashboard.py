"""The campaign dashboard: the campaign issue's body, rewritten in place (Renovate's dependency
dashboard is the model). Totals and a burndown, then each repository grouped by state with the
command that answers its gate; kept under GitHub's body limit however many repositories there
are, by folding groups and naming what was left out."""

from __future__ import annotations

import re
from collections.abc import Callable

from jobs.basics.markdown_safe import CELL_BREAK
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.shapes import dashboard_lines as shape_lines

BODY_LIMIT = 65_536  # characters GitHub accepts in an issue body
MARKER = "<!-- stepwise-campaign:{id} -->"
GROUPS: tuple[tuple[RepoState, str, bool], ...] = (  # state, heading, folded
    (RepoState.NEEDS_HUMAN, "Needs a human", False),
    (RepoState.WAITING, "Waiting at a gate", False),
    (RepoState.WORKING, "Working", False),
    (RepoState.NO_ACCESS, "Waiting for someone with access", False),
    (RepoState.APPROVED, "Approved, waiting for a wave", True),
    (RepoState.PREVIEWED, "In the preview, not approved yet", False),
    (RepoState.COMPLETED, "Completed", True),
    (RepoState.FAILED, "Failed", False),
    (RepoState.CANCELLED, "Cancelled", True),
    (RepoState.SKIPPED, "Skipped", True),
    (RepoState.LEFT_OUT, "Left out", True),
)
# Rows that show the files in scope by name (folded beyond FILES_SHOWN): not started yet.
BEFORE_START = frozenset({RepoState.PREVIEWED, RepoState.APPROVED, RepoState.NO_ACCESS})
FILES_SHOWN = 3
SAMPLES_SHOWN = 5  # distinct dry-run edits the preview shows
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def plain(text: str) -> str:
    """Untrusted text shown as text: Markdown and HTML inert, mentions and references unlinked,
    one line."""
    return _inert(" ".join(text.split()))


def _inert(text: str) -> str:
    text = _SPECIAL.sub(r"\\\1", text)
    return text.replace("@", "@\u200b").replace("#", "#\u200b")


def _bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "▓" * filled + "░" * (width - filled)


def code(text: str) -> str:
    """Text as one inline code span inside a table cell: inert whatever it holds (a span's
    content is not Markdown; a longer run of backticks fences one inside; `|` would end the
    cell even there, so it is escaped as GitHub's tables want)."""
    text = " ".join(text.split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def cell(text: str) -> str:
    """Untrusted text for a table cell where `code spans` stay code: the parts between pairs of
    backticks become code spans, the rest `plain` (reasons name config keys as `this`; escaping
    their backticks showed them literally on GitHub)."""
    parts = " ".join(text.split()).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: all of it is plain text
        return plain(text)
    return "".join(code(part) if index % 2 else _inert(part)
                   for index, part in enumerate(parts) if part or not index % 2)


def _link(text: str, url: str) -> str:
    return f"[{plain(text)}]({url})" if re.fullmatch(r"https?://[^\s()<>]+", url) else plain(text)


def _answers(entry: RepoEntry) -> str:
    """Each command that answers the repository's gate whole on a line of its own in the cell
    (`<br>`; a terminal shows each line as a row of its own, bot/cli/output.py), after where it
    is said."""
    commands = entry.answers or ([entry.answer] if entry.answer else [])
    if not commands:
        return ""
    lines = [code(command) for command in commands]
    if entry.where:
        lines.insert(0, f"on {_link(entry.where, entry.pull or entry.link)}:")
    return CELL_BREAK.join(lines)


def _row(entry: RepoEntry) -> str:
    name = _link(entry.name, entry.link)
    if entry.pull and entry.pull != entry.link:
        name += f" ({_link('pull request', entry.pull)})"
    batches = f"{entry.batches_done}/{entry.batches_total}" if entry.batches_total else "—"
    scope = f"{entry.files} files" + (f", {entry.targets} targets" if entry.targets else "")
    gate = code(entry.gate) if entry.gate else ""
    if entry.state in BEFORE_START and entry.paths:  # what a reviewer approves
        shown = entry.paths[:FILES_SHOWN]
        scope += ": " + ", ".join(code(path) for path in shown) + (
            f" and {entry.files - len(shown)} more" if entry.files > len(shown) else "")
    checks = " ".join(code(command) for command in entry.checks) or "—"
    if entry.baseline:
        checks += f" (baseline {'passes' if entry.baseline == 'passes' else '**fails**'})"
    return (f"| {name} | {scope} | {checks} | {batches} | {plain(entry.ci) or '—'} | "
            f"{gate} {cell(entry.reason)} | {_answers(entry)} |")


def _group(heading: str, entries: list[RepoEntry], folded: bool, cap: int) -> str:
    shown = entries[:cap]
    lines = ["| repository | scope | validation | batches | CI | gate or reason | to answer |",
             "|---|---|---|---|---|---|---|", *(_row(e) for e in shown)]
    if len(entries) > len(shown):
        lines.append(f"\n… and {len(entries) - len(shown)} more (the task center lists all).")
    table = "\n".join(lines)
    title = f"{heading} ({len(entries)})"
    if folded:
        return f"<details><summary>{title}</summary>\n\n{table}\n\n</details>"
    return f"### {title}\n\n{table}"


def render_dashboard(campaign: Campaign, *, steer: str | Callable[[str], str] = "/stepwise campaign",
                     task_center: str = "", limit: int = BODY_LIMIT) -> str:
    """The dashboard Markdown, at most `limit` characters. `steer`: the prefix of a campaign
    command, or what makes the whole command from its words (locally, quoted for a shell)."""
    say = steer if callable(steer) else (lambda words, prefix=steer: f"{prefix} {words}")
    in_scope = len(campaign.repos) - campaign.count(RepoState.LEFT_OUT)
    files_total, files_done = campaign.tally["files_planned"], campaign.tally["files_done"]
    done = campaign.count(RepoState.COMPLETED)
    status = f"**{campaign.status}**" + (f": {cell(campaign.status_reason)}"
                                         if campaign.status_reason else "")
    head = [MARKER.format(id=campaign.id), f"## Campaign: {plain(campaign.title)}", "",
            f"Status: {status} · {done} of {in_scope} repositories completed · "
            f"{campaign.waves_started} wave(s) started", "",
            f"Burndown: {files_done} of {files_total} files done `{_bar(files_done, files_total)}`",
            ""]
    head += _next_moves(campaign, say)
    if campaign.status is CampaignStatus.PLAN:
        head += _samples(campaign.entries(RepoState.PREVIEWED))
    head += shape_lines(campaign)
    if task_center:
        head.append(f"\nEvery repository, with its history: {task_center}")
    groups = [(heading, campaign.entries(state), folded)
              for state, heading, folded in GROUPS]
    groups = [g for g in groups if g[1]]
    cap = max((len(g[1]) for g in groups), default=0)
    while True:
        body = "\n".join([*head, "", *(_group(h, es, f, cap) + "\n" for h, es, f in groups)])
        if len(body) <= limit or cap == 0:
            return body if len(body) <= limit else body[: limit - 40] + "\n\n… (cut at GitHub's limit)"
        cap //= 2


def fenced(text: str, info: str = "") -> str:
    """Text in a fenced block no line of it can close (the fence outgrows its backtick runs)."""
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _samples(entries: list[RepoEntry]) -> list[str]:
    """The dry-run edits of the preview, each distinct one once, with the repositories it
    stands for (identical edits across repositories are the common case)."""
    groups: dict[str, list[str]] = {}
    for entry in entries:
        if entry.sample:
            body = "\n".join(entry.sample.splitlines()[2:])  # without its file-name header
            groups.setdefault(body, []).append(entry.name)
    if not groups:
        return []
    lines = ["", f"### Sample edits ({len(groups)} distinct, one file of each repository; "
                 "each job's plan shows its whole first batch)"]
    samples = {body: next(e.sample for e in entries if e.name == names[0])
               for body, names in groups.items()}
    for body, names in list(groups.items())[:SAMPLES_SHOWN]:
        who = ", ".join(plain(name) for name in names[:5]) + (
            f" and {len(names) - 5} more" if len(names) > 5 else "")
        lines += ["", f"{who}:", "", fenced(samples[body], "diff")]
    if len(groups) > SAMPLES_SHOWN:
        lines += ["", f"… and {len(groups) - SAMPLES_SHOWN} other distinct edits."]
    return lines


def _next_moves(campaign: Campaign, say: Callable[[str], str]) -> list[str]:
    """What to type next: each command at the end of a list item of its own (a CLI prints it
    on a line of its own, whole; bot/cli/output.py)."""
    def item(what: str, words: str) -> str:
        return f"- {what}: {code(say(words))}"
    moves: dict[CampaignStatus, tuple[str, list[str]]] = {
        CampaignStatus.PLAN: ("This is the preview; no repository was changed.", [
            item("To start every repository", "approve all"),
            item("To start one", "approve <repo>"), item("To stop", "cancel")]),
        CampaignStatus.HALTED: ("Halted. Fix the spec or the repositories, then resume.", [
            item("To resume", "resume"),
            item("To retry the repositories that need a human", "retry-failed")]),
        CampaignStatus.PAUSED: ("Paused.", [item("To start the next wave", "resume")]),
        CampaignStatus.RUNNING: ("Commands:", [
            item("To pass every plan and milestone gate", "approve all"),
            item("To retry the repositories that need a human", "retry-failed"),
            item("To skip one", "skip <repo> <reason>"), item("To pause", "pause"),
            item("To stop", "cancel"), item("To add a repository", "add <repo>")]),
    }
    if campaign.status not in moves:
        return []
    said, commands = moves[campaign.status]
    return [said, "", *commands, ""]
