"""The `campaign` verb (the campaigns feature's, bot/commands/campaign.py): anyone may send it,
as it authorizes each effect itself where it happens (bot/server/campaigns/); it needs no job,
answers no gate, and hands its words to the campaign."""

from __future__ import annotations

from bot.commands import Access, spec_for
from tests.bot.commands.test_handlers import run


def test_campaign_is_anyone_s_needs_no_job_and_answers_no_gate() -> None:
    spec = spec_for("campaign")
    assert spec is not None
    assert (spec.access, spec.needs_job, spec.answers_gate) == (Access.ANYONE, False, False)


def test_campaign_hands_its_words_to_the_campaign() -> None:
    assert run("campaign", None, "approve all") == ("steered: approve all",
                                                    ["campaign:approve all"])
