"""The task center's campaign pages: every campaign (newest first) and one campaign whole,
every repository listed (the issue's dashboard folds them to stay under GitHub's limit)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from bot.plumbing import campaign_store
from bot.taskcenter.auth import PageViewer, StoreDep
from bot.taskcenter.pages import render
from jobs.features.campaigns.dashboard import GROUPS

router = APIRouter(include_in_schema=False)
MAX_LISTED = 500


@router.get("/campaigns")
def campaigns_page(_: PageViewer, store: StoreDep) -> HTMLResponse:
    docs = [doc for key in campaign_store.newest_keys(store.redis, MAX_LISTED)
            if (doc := campaign_store.load(store.redis, key)) is not None]
    return render("campaigns.html", docs=docs)


@router.get("/campaigns/{owner}/{name}/{number}")
def campaign_page(owner: str, name: str, number: int, _: PageViewer,
                  store: StoreDep) -> HTMLResponse:
    doc = campaign_store.find(store.redis, f"{owner}/{name}", number)
    if doc is None:
        return render("problem.html", 404, title="No such campaign",
                      message=f"There is no campaign on {owner}/{name}#{number}.",
                      hint="Campaigns start from an issue labelled `stepwise-campaign`.")
    groups = [(heading, doc.campaign.entries(state))
              for state, heading, _folded in GROUPS]
    return render("campaign.html", doc=doc, groups=[g for g in groups if g[1]])
