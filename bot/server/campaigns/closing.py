"""Closing and reopening a campaign issue. Closing it cancels the campaign as `/stepwise campaign
cancel` would (repositories not started never start; running jobs are cancelled), when the
person who closed it may steer the campaign; the dashboard says who closed it. Reopening it
restarts nothing: a reply says how to run the campaign again."""

from __future__ import annotations

from bot.events import Event
from bot.plumbing import campaign_store
from bot.server.campaigns.port import ServerCampaignPort
from bot.server.campaigns.tasks import STEER, held, reply, write_dashboard
from bot.server.confirmations import closed_on_github
from bot.server.context import ServerContext
from bot.server.steer import Actor, may_steer
from jobs.features.campaigns.port import carry_out
from jobs.features.campaigns.record import CampaignStatus
from jobs.features.campaigns.steering import CampaignCommand, CampaignVerb, apply

CLOSED_BY_OTHER = (
    "@{sender} closed this issue, but the campaign goes on: {reason}.\n\n"
    "Someone who may steer it (write, maintain or admin permission, or the config's "
    "`approvers`) can stop it with `" + STEER + " cancel`, or by closing the issue.")
CLOSED = ("Closing this issue cancelled the campaign (@{sender}): {said}\n\n"
          "Reopening the issue does not restart it. To run the campaign again, remove the "
          "`{label}` label and add it again: a new preview is posted and nothing changes until "
          "`" + STEER + " approve all`.")
REOPENED = ("The campaign stays {status}{why}; reopening the issue does not restart it. To run "
            "it again, remove the `{label}` label and add it again: a new preview is posted here "
            "and nothing changes until `" + STEER + " approve all`.")
LABEL = "stepwise-campaign"


def campaign_closed(ctx: ServerContext, event: Event) -> bool:
    """`issues.closed` on a campaign issue (True when it is one)."""
    doc = campaign_store.find(ctx.redis, event.repo, event.number)
    if doc is None:
        return False
    if doc.campaign.status in campaign_store.ENDED:
        return True
    client = ctx.installation(event.installation_id)
    if not closed_on_github(client, event):  # a replayed close of an issue open again
        return True
    decision = may_steer(client, event.repo, Actor(event.sender, event.sender_id),
                         action="cancelling the campaign by closing its issue",
                         approvers=doc.approvers, approver_ids=doc.approver_ids)
    if not decision.allowed:
        reply(ctx, event, CLOSED_BY_OTHER.format(sender=event.sender or "someone",
                                                 reason=decision.reason))
        return True
    with held(ctx, doc, "the close is looked at again in a few seconds") as doc:
        if doc.campaign.status in campaign_store.ENDED:
            return True
        now = ctx.clock()
        steered = apply(doc.campaign, CampaignCommand(CampaignVerb.CANCEL), now, by=event.sender)
        who = f"@{event.sender}" if event.sender else "someone"
        doc.campaign.status_reason = f"{who} closed the campaign issue"
        doc.closed_by, doc.approved_by = event.sender, event.sender  # cancels in their name
        doc.approved_by_id = event.sender_id
        port = ServerCampaignPort(ctx, doc)
        said = carry_out(doc.campaign, doc.settings, steered, port, now)
        write_dashboard(ctx, doc)
        campaign_store.save(ctx.redis, doc)
    reply(ctx, event, CLOSED.format(sender=event.sender or "someone", label=LABEL,
                                    said="\n".join([steered.message,
                                                    *(f"- {line}" for line in said)])))
    return True


def campaign_reopened(ctx: ServerContext, event: Event) -> bool:
    """`issues.reopened` on a campaign issue (True when it is one): say that nothing restarts,
    and how to."""
    doc = campaign_store.find(ctx.redis, event.repo, event.number)
    if doc is None:
        return False
    if doc.campaign.status not in campaign_store.ENDED:
        return True
    why = f" ({doc.campaign.status_reason})" if doc.campaign.status is \
        CampaignStatus.CANCELLED and doc.campaign.status_reason else ""
    reply(ctx, event, REOPENED.format(status=doc.campaign.status, why=why, label=LABEL))
    return True
