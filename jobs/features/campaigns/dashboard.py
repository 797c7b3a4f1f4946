"""The campaign dashboard: the campaign issue's body, rewritten in place (Renovate's dependency
dashboard is the model). Totals and a burndown, then each repository grouped by state with the
command that answers its gate; kept under GitHub's body limit however many repositories there
are, by folding groups and naming what was left out."""

from __future__ import annotations

import re

from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState

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
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def plain(text: str) -> str:
    """Untrusted text shown as text: Markdown and HTML inert, mentions and references unlinked,
    one line."""
    text = _SPECIAL.sub(r"\\\1", " ".join(text.split()))
    return text.replace("@", "@\u200b").replace("#", "#\u200b")


def _bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "▓" * filled + "░" * (width - filled)


def _row(entry: RepoEntry) -> str:
    link = f"[{plain(entry.name)}]({entry.link})" if entry.link.startswith("https://") \
        else plain(entry.name)
    batches = f"{entry.batches_done}/{entry.batches_total}" if entry.batches_total else "—"
    scope = f"{entry.files} files" + (f", {entry.targets} targets" if entry.targets else "")
    gate = f"`{entry.gate}`" if entry.gate else ""
    answer = f"`{entry.answer}`" if entry.answer else ""
    return (f"| {link} | {scope} | {batches} | {plain(entry.ci) or '—'} | "
            f"{gate} {plain(entry.reason)} | {answer} |")


def _group(heading: str, entries: list[RepoEntry], folded: bool, cap: int) -> str:
    shown = entries[:cap]
    lines = ["| repository | scope | batches | CI | gate or reason | to answer |",
             "|---|---|---|---|---|---|", *(_row(e) for e in shown)]
    if len(entries) > len(shown):
        lines.append(f"\n… and {len(entries) - len(shown)} more (the task center lists all).")
    table = "\n".join(lines)
    title = f"{heading} ({len(entries)})"
    if folded:
        return f"<details><summary>{title}</summary>\n\n{table}\n\n</details>"
    return f"### {title}\n\n{table}"


def render_dashboard(campaign: Campaign, *, steer: str = "/stepwise campaign",
                     task_center: str = "", limit: int = BODY_LIMIT) -> str:
    """The dashboard Markdown, at most `limit` characters."""
    in_scope = len(campaign.repos) - campaign.count(RepoState.LEFT_OUT)
    files_total, files_done = campaign.tally["files_planned"], campaign.tally["files_done"]
    done = campaign.count(RepoState.COMPLETED)
    status = f"**{campaign.status}**" + (f": {plain(campaign.status_reason)}"
                                         if campaign.status_reason else "")
    head = [MARKER.format(id=campaign.id), f"## Campaign: {plain(campaign.title)}", "",
            f"Status: {status} · {done} of {in_scope} repositories completed · "
            f"{campaign.waves_started} wave(s) started", "",
            f"Burndown: {files_done} of {files_total} files done `{_bar(files_done, files_total)}`",
            ""]
    head += _next_moves(campaign, steer)
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


def _next_moves(campaign: Campaign, steer: str) -> list[str]:
    if campaign.status is CampaignStatus.PLAN:
        return [f"This is the preview; no repository was changed. To start: `{steer} approve all`"
                f" (or `{steer} approve <repo>` for one), or `{steer} cancel`."]
    if campaign.status is CampaignStatus.HALTED:
        return [f"Halted. Fix the spec or the repositories, then `{steer} resume`; "
                f"`{steer} retry-failed` retries the repositories that need a human."]
    if campaign.status is CampaignStatus.PAUSED:
        return [f"Paused. `{steer} resume` starts the next wave."]
    if campaign.status is CampaignStatus.RUNNING:
        return [f"Commands: `{steer} approve all` passes every plan and milestone gate, "
                f"`{steer} retry-failed`, `{steer} skip <repo> <reason>`, `{steer} pause`, "
                f"`{steer} cancel`, `{steer} add <repo>`."]
    return []
