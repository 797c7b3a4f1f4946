"""The campaign's pure rules: selection, waves within the open-PR limit, the halt threshold,
the steering commands (with near misses), and a dashboard under GitHub's limit at any size."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.basics.errors import BadInputError
from jobs.features.campaigns.dashboard import BODY_LIMIT, render_dashboard
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState
from jobs.features.campaigns.rollout import halt_reason, mark_started, next_wave, settle
from jobs.features.campaigns.selection import RepoFacts, left_out_reason
from jobs.features.campaigns.settings import CampaignSettings
from jobs.features.campaigns.steering import (
    CampaignVerb,
    JobAction,
    apply,
    parse_command,
)

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def campaign(count: int, state: RepoState = RepoState.APPROVED) -> Campaign:
    found = Campaign(id="c1", title="Bump", spec_digest="d", created_at=NOW, updated_at=NOW,
                     status=CampaignStatus.RUNNING)
    for index in range(count):
        found.repos[f"acme/r{index}"] = RepoEntry(name=f"acme/r{index}", state=state, files=3)
    return found


def test_selection_names_why_a_repository_is_left_out() -> None:
    settings = CampaignSettings(repositories=["acme/*"], exclude=["acme/legacy-*"],
                                topics=["python"], languages=["Python"])
    facts = RepoFacts(name="acme/api", topics=("python",), language="Python")
    assert left_out_reason(settings, facts) is None
    assert left_out_reason(settings, RepoFacts(name="other/api")) == \
        "not named in `campaign.repositories`"
    assert left_out_reason(settings, RepoFacts(name="acme/legacy-x", topics=("python",),
                                               language="Python")) == "named in `campaign.exclude`"
    assert "topics" in (left_out_reason(settings, RepoFacts(name="acme/b", language="Python"))
                        or "")
    for flag, reason in (("archived", "archived"), ("fork", "a fork"),
                         ("can_write", "no write permission"),
                         ("installed", "the App is not installed there")):
        value = flag not in ("can_write", "installed")
        odd = RepoFacts(name="acme/api", topics=("python",), language="Python", **{flag: value})
        assert left_out_reason(settings, odd) == reason


def test_canaries_then_waves_within_the_open_pr_limit() -> None:
    settings = CampaignSettings(canary=2, wave=3, max_open_prs=4)
    found = campaign(10)
    first = next_wave(found, settings)
    assert first == ["acme/r0", "acme/r1"]
    mark_started(found, first)
    assert next_wave(found, settings) == []  # the canaries still work
    for name in first:
        found.repos[name].state = RepoState.WAITING  # settled, but their PRs stay open
    second = next_wave(found, settings)
    assert second == ["acme/r2", "acme/r3"]  # a wave of 3, but only 4 PRs may be open
    assert found.repos["acme/r0"].wave == 0
    mark_started(found, second)
    assert found.repos["acme/r2"].wave == 1


def test_the_halt_fires_past_the_threshold_and_resume_acknowledges() -> None:
    settings = CampaignSettings(canary=2, halt_when_failing=0.2)
    found = campaign(5)
    mark_started(found, ["acme/r0", "acme/r1"])
    found.repos["acme/r0"].state = RepoState.COMPLETED
    found.repos["acme/r1"].state = RepoState.NEEDS_HUMAN
    assert "1 of 2 started repositories need a human (50%" in (halt_reason(found, settings) or "")
    settle(found, settings, NOW)
    assert found.status is CampaignStatus.HALTED
    assert next_wave(found, settings) == []
    said = apply(found, parse_command("resume"), NOW)
    assert "Resumed" in said.message and found.status is CampaignStatus.RUNNING
    assert halt_reason(found, settings) is None  # acknowledged: not counted again
    settle(found, settings, NOW)
    assert found.status is CampaignStatus.RUNNING


@pytest.mark.parametrize(("text", "error"), [
    ("", "empty"), ("approve", "needs a repository"), ("pause now", "takes no argument"),
    ("skip acme/a", "needs a reason"), ("aprove all", "did you mean `approve`"),
    ("skip acme/a REASON", "not its placeholder `REASON`"),
    ("skip acme/a <reason>", "not its placeholder `<reason>`"),
    ("approve acme/a acme/b", "takes one repository"), ("retry", "did you mean `retry-failed`"),
])
def test_commands_refuse_near_misses(text: str, error: str) -> None:
    with pytest.raises(BadInputError, match=error):
        parse_command(text)


def test_commands_parse_and_act() -> None:
    assert parse_command("Skip acme/a too old to fix").reason == "too old to fix"
    assert parse_command("retry-failed").verb is CampaignVerb.RETRY_FAILED
    found = campaign(3, RepoState.PREVIEWED)
    found.status = CampaignStatus.PLAN
    said = apply(found, parse_command("approve acme/r1"), NOW)
    assert found.status is CampaignStatus.RUNNING and said.actions == ()
    assert [e.state for e in found.entries()] == [RepoState.PREVIEWED, RepoState.APPROVED,
                                                  RepoState.PREVIEWED]
    found.repos["acme/r1"].state, found.repos["acme/r1"].gate = RepoState.WAITING, "milestone"
    found.repos["acme/r2"].state, found.repos["acme/r2"].gate = RepoState.NEEDS_HUMAN, "failure"
    said = apply(found, parse_command("approve all"), NOW)
    assert said.actions == (("acme/r1", JobAction.APPROVE),)  # not the failure gate
    assert apply(found, parse_command("retry-failed"), NOW).actions == \
        (("acme/r2", JobAction.RETRY),)
    said = apply(found, parse_command("cancel"), NOW)
    assert found.status is CampaignStatus.CANCELLED
    assert set(said.actions) == {("acme/r1", JobAction.CANCEL), ("acme/r2", JobAction.CANCEL)}


def test_the_dashboard_stays_under_githubs_limit_at_a_thousand_repositories() -> None:
    found = campaign(1000)
    states = list(RepoState)
    for index, entry in enumerate(found.entries()):
        entry.state = states[index % len(states)]
        entry.name = f"acme/{'long-repository-name-' * 3}{index}"
        entry.reason = "a reason with `ticks` <b>html</b> and @team #12 " * 5
        entry.gate, entry.answer = "failure", f"/stepwise retry # {index}"
    body = render_dashboard(found)
    assert len(body) <= BODY_LIMIT
    assert "the task center lists all" in body
    assert "<b>" not in body and "@team" not in body  # untrusted text stays text
    small = render_dashboard(campaign(3))
    assert "… and" not in small and small.count("| acme/r") == 3


def test_a_sample_edit_is_a_short_inert_diff() -> None:
    from jobs.features.campaigns.dashboard import fenced
    from jobs.features.campaigns.sample import MAX_LINES, cut_diff, dry_run_diff
    from jobs.inputs.recipes import rules_for
    from jobs.inputs.spec import TaskSpec

    preview = rules_for("replace").preview
    assert preview is not None
    spec = TaskSpec(recipe="replace", paths=["*.py"], find=[r"\bold\b", "```"], replace="new")
    text = "".join(f"old({i})\n" for i in range(40)) + "x = '```'\n"
    diff = cut_diff(dry_run_diff("a.py", text, edit=lambda before: preview(before, spec)))
    lines = diff.splitlines()
    assert lines[:4] == ["--- a/a.py", "+++ b/a.py", "@@ -1,41 +1,41 @@", "-old(0)"]
    assert len(lines) == MAX_LINES + 1 and lines[-1] == "…"
    assert dry_run_diff("a.py", "nothing\n", edit=lambda before: preview(before, spec)) == ""
    block = fenced("-x = '```'\n+x = 'new'", "diff")
    assert block.startswith("````diff\n") and block.endswith("\n````")  # no line closes it
