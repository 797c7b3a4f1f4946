"""The campaign record's running counters and per-state index stay equal to a full recount
whatever happens to the entries (field changes, replaced and added entries, the rollout rules
and the steering commands), and a record written before the counters existed gets them on load."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobs.basics.errors import BadInputError
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState, recount
from jobs.features.campaigns.rollout import halt_reason, mark_started, next_wave, settle
from jobs.features.campaigns.settings import CampaignSettings
from jobs.features.campaigns.steering import apply, parse_command

NOW = datetime(2026, 12, 1, tzinfo=UTC)
NAMES = [f"acme/r{index}" for index in range(8)]
COMMANDS = ["approve all", "retry-failed", "pause", "resume", "cancel", "skip acme/r1 gone",
            "approve acme/r2"]

names = st.sampled_from(NAMES)
events = st.one_of(
    st.tuples(st.just("state"), names, st.sampled_from(list(RepoState))),
    st.tuples(st.just("wave"), names, st.one_of(st.none(), st.integers(0, 3))),
    st.tuples(st.just("acknowledged"), names, st.booleans()),
    st.tuples(st.just("files"), names, st.integers(0, 50)),
    st.tuples(st.just("files_done"), names, st.integers(0, 50)),
    st.tuples(st.just("replace"), names, st.sampled_from(list(RepoState))),
    st.tuples(st.just("rules"), st.just(""), st.just("")),
    st.tuples(st.just("command"), st.sampled_from(COMMANDS), st.just("")),
)


def fresh(count: int) -> Campaign:
    found = Campaign(id="c1", title="Bump", spec_digest="d", created_at=NOW, updated_at=NOW,
                     status=CampaignStatus.RUNNING)
    for name in NAMES[:count]:
        found.repos[name] = RepoEntry(name=name, state=RepoState.APPROVED, files=3)
    return found


def apply_event(found: Campaign, event: tuple[str, str, object]) -> None:
    kind, name, value = event
    rules = CampaignSettings(canary=2, wave=2, max_open_prs=4, halt_when_failing=0.3)
    if kind == "rules":
        mark_started(found, next_wave(found, rules))
        settle(found, rules, NOW)
    elif kind == "command":
        with contextlib.suppress(BadInputError):  # a repository not in this campaign
            apply(found, parse_command(name), NOW)
    elif kind == "replace" or name not in found.repos:  # `add`, or a preview redone
        state = value if isinstance(value, RepoState) else RepoState.PREVIEWED
        found.repos[name] = RepoEntry(name=name, state=state, files=2)
    else:
        setattr(found.repos[name], kind, value)


def assert_consistent(found: Campaign) -> None:
    assert found.tally == recount(found.entries())
    for state in RepoState:
        assert [e.name for e in found.entries(state)] == \
            [e.name for e in found.entries() if e.state is state]
    assert [e.order for e in found.entries()] == sorted(e.order for e in found.entries())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(1, len(NAMES)), sequence=st.lists(events, max_size=40))
def test_counters_equal_a_full_recount_after_any_event_sequence(
        count: int, sequence: list[tuple[str, str, object]]) -> None:
    found = fresh(count)
    for event in sequence:
        apply_event(found, event)
        assert_consistent(found)
    again = Campaign.model_validate_json(found.model_dump_json())
    assert again.tally == found.tally
    assert [e.model_dump() for e in again.entries()] == [e.model_dump() for e in found.entries()]
    assert_consistent(again)


def test_the_halt_rule_reads_the_counters_not_the_entries() -> None:
    found = fresh(5)
    mark_started(found, ["acme/r0", "acme/r1"])
    found.repos["acme/r1"].state = RepoState.NEEDS_HUMAN
    assert found.tally["started"] == 2 and found.tally["troubled"] == 1
    rules = CampaignSettings(halt_when_failing=0.2)
    assert "1 of 2 started repositories need a human (50%" in (halt_reason(found, rules) or "")
    found.tally["troubled"] = 0  # what the rule reads: the counter alone decides
    assert halt_reason(found, rules) is None


def test_a_record_written_before_the_counters_is_counted_on_load() -> None:
    found = fresh(4)
    mark_started(found, ["acme/r0", "acme/r1"])
    found.repos["acme/r0"].state = RepoState.NEEDS_HUMAN
    old = json.loads(found.model_dump_json())
    del old["tally"], old["next_order"]
    for entry in old["repos"].values():
        del entry["order"]
    loaded = Campaign.model_validate(old)
    assert loaded.tally == recount(loaded.entries()) == found.tally
    assert list(loaded.repos) == NAMES[:4]  # the rollout order is kept
    assert [e.order for e in loaded.entries()] == [0, 1, 2, 3]


def test_one_tally_feeds_every_figure_after_skips_reverts_and_failures() -> None:
    """The burndown counts the same repositories for files done as for files planned, and a
    repository never more done than planned (its reverted or retried files counted twice once
    gave "12 of 11 files done")."""
    from jobs.features.campaigns.dashboard import render_dashboard

    campaign = Campaign(id="c", title="t", spec_digest="d", created_at=NOW, updated_at=NOW,
                        status=CampaignStatus.RUNNING)
    rows = {"acme/done": (RepoState.COMPLETED, 4, 4), "acme/skipped": (RepoState.SKIPPED, 3, 2),
            "acme/failed": (RepoState.FAILED, 2, 1), "acme/redone": (RepoState.COMPLETED, 2, 5),
            "acme/out": (RepoState.LEFT_OUT, 0, 0)}
    for name, (state, files, done) in rows.items():
        campaign.repos[name] = RepoEntry(name=name, state=state, files=files, files_done=done,
                                         wave=0)
    assert campaign.tally == recount(campaign.entries())
    assert (campaign.tally["files_planned"], campaign.tally["files_done"]) == (8, 7)
    assert "Burndown: 7 of 8 files done" in render_dashboard(campaign)
    campaign.repos["acme/redone"].files_done = 1  # a batch reverted
    assert "Burndown: 6 of 8 files done" in render_dashboard(campaign)
