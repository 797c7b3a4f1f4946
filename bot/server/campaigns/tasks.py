"""What the worker does for campaigns: start one from its label (the preview, then its plan
gate), steer it from `/stepwise campaign <verb>` comments, and tick every running campaign in
each reconciler pass (read its repositories' jobs back, start the next wave, rewrite the
dashboard in the campaign issue's body when it changed)."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from bot.events import Event
from bot.github.campaign_calls import update_issue_body
from bot.github.write_budget import WriteBudgetWait
from bot.plumbing import campaign_store
from bot.plumbing.campaign_store import CampaignDoc
from bot.plumbing.leases import job_lock
from bot.plumbing.trigger_labels import is_trigger
from bot.server.campaigns.access import NOT_A_CONTROL, control_allowed
from bot.server.campaigns.port import ServerCampaignPort
from bot.server.context import ServerContext
from bot.server.steer import Actor, may_steer
from bot.steering import resolve_approvers
from jobs.basics.errors import BadInputError, RetryClass, StepwiseError
from jobs.features.campaigns.dashboard import BODY_LIMIT, render_dashboard
from jobs.features.campaigns.port import apply_spec_change, carry_out, drive, preview_entry
from jobs.features.campaigns.record import Campaign
from jobs.features.campaigns.settings import parse_campaign_issue
from jobs.features.campaigns.steering import apply, parse_command
from jobs.inputs.config import RepoConfig

log = logging.getLogger(__name__)
START, END = "<!-- stepwise-campaign-dashboard:start -->", "<!-- stepwise-campaign-dashboard:end -->"
STEER = "/stepwise campaign"
NO_CAMPAIGN = ("There is no Stepwise campaign on this issue. Label it `{label}` (with a "
               "```stepwise block holding a `campaign:` block) to start one.")


def issue_text(body: str) -> str:
    """The campaign issue's own text: its body without the dashboard the App wrote into it."""
    head, found, rest = body.partition(START)
    return (head + rest.partition(END)[2]).rstrip() if found else body.rstrip()


def reply(ctx: ServerContext, event: Event, text: str) -> None:
    forge = ctx.forge(ctx.installation(event.installation_id), event.repo)
    forge.reply(None, event.number, f"campaign:{event.delivery_id}", text)


def campaign_labeled(ctx: ServerContext, event: Event, config: RepoConfig) -> bool:
    """A label was added: the config's campaign label (case-insensitive) starts a campaign."""
    if not is_trigger(event.label, config.campaign_label):
        return False
    start_campaign(ctx, event, config)
    return True


def start_campaign(ctx: ServerContext, event: Event, config: RepoConfig) -> None:
    """The campaign label: preview every repository the block selects, wait at the plan gate."""
    client = ctx.installation(event.installation_id)
    owner, name = event.repo.split("/", 1)
    if not control_allowed(event.repo, ctx.settings.campaign_control_repos):
        reply(ctx, event, f"Stepwise did not start the campaign: "
                           f"{NOT_A_CONTROL.format(owner=owner)}.")
        return
    approver_ids = resolve_approvers(client, config.approvers)  # matched by account id
    decision = may_steer(client, event.repo, Actor(event.sender, event.sender_id),
                         action="start a campaign",
                         approvers=config.approvers, approver_ids=approver_ids)
    if not decision.allowed:
        reply(ctx, event, f"Stepwise did not start the campaign: {decision.reason}.")
        return
    existing = campaign_store.find(ctx.redis, event.repo, event.number)
    if existing is not None and existing.campaign.status not in campaign_store.ENDED:
        reply(ctx, event, f"This campaign is already `{existing.campaign.status}`; "
                           f"`{STEER} cancel` ends it.")
        return
    issue = client.issue(owner, name, event.number)
    text = issue_text(issue.body)
    try:
        parsed = parse_campaign_issue(issue.title, text)
    except BadInputError as exc:
        reply(ctx, event, f"Stepwise cannot start the campaign: {exc.message}\n\nFix: {exc.hint}"
                           f"\n\nThen remove the `{event.label}` label and add it again.")
        return
    now = ctx.clock()
    doc = CampaignDoc(
        campaign=Campaign(id=uuid.uuid4().hex[:12], title=parsed.task.title,
                          spec_digest=parsed.task.spec.digest(), created_at=now, updated_at=now),
        settings=parsed.settings, control=event.repo, number=event.number,
        installation_id=event.installation_id, title=parsed.task.title,
        task_body=parsed.task.body, issue_text=text, approvers=list(config.approvers),
        approver_ids=approver_ids)
    port = ServerCampaignPort(ctx, doc, viewer=event.sender)
    named = {n.lower() for n in parsed.settings.repositories}
    for repo in port.visible():  # the others are left out silently: no name, reason or count
        if repo.full_name.lower() == event.repo.lower() and repo.full_name.lower() not in named:
            continue  # the control repository takes part only when named
        entry = preview_entry(repo.full_name, parsed.settings, port)
        doc.campaign.repos[entry.name] = entry
    doc.campaign.log(now, f"previewed by @{event.sender}")
    write_dashboard(ctx, doc)
    campaign_store.save(ctx.redis, doc)


def write_dashboard(ctx: ServerContext, doc: CampaignDoc) -> None:
    """Rewrite the dashboard part of the campaign issue's body, only when it changed."""
    room = BODY_LIMIT - len(doc.issue_text) - len(START) - len(END) - 8
    center = ctx.settings.task_center_url
    dashboard = render_dashboard(doc.campaign, steer=STEER, limit=max(room, 1000), task_center=(
        f"{center.rstrip('/')}/campaigns/{doc.control}/{doc.number}" if center else ""))
    digest = hashlib.sha256(dashboard.encode()).hexdigest()
    if digest == doc.dashboard_digest:
        return
    owner, name = doc.control.split("/", 1)
    body = f"{doc.issue_text}\n\n{START}\n{dashboard}\n{END}\n"
    try:
        update_issue_body(ctx.installation(doc.installation_id), owner, name, doc.number, body)
    except WriteBudgetWait:
        return  # the App's write budget is spent: a later pass writes it (the digest is old)
    doc.dashboard_digest = digest


@contextmanager
def held(ctx: ServerContext, doc: CampaignDoc, retried: str) -> Iterator[CampaignDoc]:
    """The campaign's record read again under its lock; busy (retried later) while a tick or
    another command holds it."""
    with job_lock(ctx.redis, doc.key) as acquired:
        if not acquired:
            raise StepwiseError("the campaign is being updated", code="campaign_busy",
                                retry_class=RetryClass.AUTO_RETRY, hint=retried)
        yield campaign_store.find(ctx.redis, doc.control, doc.number) or doc


def steer_campaign(ctx: ServerContext, event: Event, text: str) -> str:
    """`/stepwise campaign <verb> ...`: the reply."""
    doc = campaign_store.find(ctx.redis, event.repo, event.number)
    if doc is None:
        return NO_CAMPAIGN.format(label="stepwise-campaign")
    client = ctx.installation(event.installation_id)
    decision = may_steer(client, event.repo, Actor(event.sender, event.sender_id),
                         action="steer the campaign",
                         approvers=doc.approvers, approver_ids=doc.approver_ids)
    if not decision.allowed:
        return f"Refused: {decision.reason}. Nothing changed."
    try:
        command = parse_command(text)
    except BadInputError as exc:
        return f"{exc.message}. {exc.hint}"
    with held(ctx, doc, "the command is applied again in a few seconds") as doc:
        now = ctx.clock()
        try:
            steered = apply(doc.campaign, command, now, by=event.sender)
        except BadInputError as exc:
            return f"{exc.message}. {exc.hint}"
        if steered.actions or command.verb == "approve":
            doc.approved_by = event.sender  # per-repository effects happen in their name
            doc.approved_by_id = event.sender_id
        port = ServerCampaignPort(ctx, doc, viewer=event.sender)
        said = carry_out(doc.campaign, doc.settings, steered, port, now)
        if doc.campaign.status not in campaign_store.ENDED:  # an ended one keeps what it said
            drive(doc.campaign, doc.settings, port, now)
        write_dashboard(ctx, doc)
        campaign_store.save(ctx.redis, doc)
    return "\n".join([steered.message, *(f"- {line}" for line in said)])


def tick(ctx: ServerContext, key: str) -> None:
    """Read a campaign's repositories back and start what the rules allow."""
    with job_lock(ctx.redis, key) as acquired:
        if not acquired:
            return  # a command holds it; the next pass looks again
        doc = campaign_store.load(ctx.redis, key)
        if doc is None or doc.campaign.status in campaign_store.ENDED:
            ctx.redis.srem(campaign_store.CAMPAIGNS, key)
            return
        drive(doc.campaign, doc.settings, ServerCampaignPort(ctx, doc), ctx.clock())
        write_dashboard(ctx, doc)
        campaign_store.save(ctx.redis, doc)


def tick_all(ctx: ServerContext) -> None:
    for key in campaign_store.active_keys(ctx.redis):
        try:
            tick(ctx, key)
        except StepwiseError as exc:  # one campaign's trouble must not stop the others
            log.warning("campaign tick failed", extra={"campaign": key, "error": exc.message})


def campaign_edited(ctx: ServerContext, event: Event) -> bool:
    """`issues.edited` on a campaign issue (True when it is one). The App's own dashboard edits
    change nothing; a new spec redoes the preview before approval, and afterwards pauses the
    campaign until `resume` applies it to the repositories not done."""
    doc = campaign_store.find(ctx.redis, event.repo, event.number)
    if doc is None:
        return False
    if event.sender_is_bot:
        return True
    text = issue_text(event.body)
    try:
        parsed = parse_campaign_issue(event.title, text)
    except BadInputError as exc:
        reply(ctx, event, f"The campaign keeps its approved spec: {exc.message}\n\nFix: "
                           f"{exc.hint}")
        return True
    with held(ctx, doc, "the edit is looked at again in a few seconds") as doc:
        changed = parsed.task.spec.digest() != doc.campaign.spec_digest \
            or parsed.settings != doc.settings
        doc.issue_text, doc.title, doc.task_body = text, parsed.task.title, parsed.task.body
        doc.settings = parsed.settings
        if changed:
            said = apply_spec_change(doc.campaign, parsed.task.spec.digest(), parsed.settings,
                                     ServerCampaignPort(ctx, doc), ctx.clock())
            reply(ctx, event, f"{said} (edited by @{event.sender})")
        doc.dashboard_digest = ""  # the issue's text changed: write the body again
        write_dashboard(ctx, doc)
        campaign_store.save(ctx.redis, doc)
    return True
