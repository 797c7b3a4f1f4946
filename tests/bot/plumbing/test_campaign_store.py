"""The campaign record in a real Redis: a hash of a header, one field per repository and the
running counters. A repository event writes its one field and the counters' changes (the same
bytes at 50 repositories as at 1,000), what is loaded back always has counters equal to a full
recount, and a record in the older format (one JSON string) is rewritten on load."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.plumbing import campaign_store
from bot.plumbing.campaign_store import CampaignDoc
from jobs.features.campaigns.port import JobView, record_view
from jobs.features.campaigns.record import Campaign, CampaignStatus, RepoEntry, RepoState, recount
from jobs.features.campaigns.settings import CampaignSettings

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def make_doc(size: int, number: int = 7) -> CampaignDoc:
    campaign = Campaign(id=uuid.uuid4().hex[:12], title="Bump", spec_digest="d", created_at=NOW,
                        updated_at=NOW, status=CampaignStatus.RUNNING)
    for index in range(size):
        name = f"acme/service-{index:04d}"
        campaign.repos[name] = RepoEntry(name=name, state=RepoState.APPROVED, files=4,
                                         targets=9, preview_digest="abc")
    return CampaignDoc(campaign=campaign, settings=CampaignSettings(), control="acme/control",
                       number=number, installation_id=1, title="Bump", task_body="body",
                       issue_text="the issue " * 200)


def reloaded(connection: redis.Redis, doc: CampaignDoc) -> CampaignDoc:
    found = campaign_store.load(connection, doc.key)
    assert found is not None
    return found


views = st.builds(JobView, state=st.sampled_from(list(RepoState)),
                  batches_done=st.integers(0, 3), batches_total=st.integers(0, 3),
                  files_done=st.integers(0, 4))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.integers(0, 11), views, st.booleans(), st.booleans()),
                      max_size=25))
def test_stored_counters_equal_a_full_recount_after_random_events(
        redis_url: str, steps: list[tuple[int, JobView, bool, bool]]) -> None:
    connection = redis.Redis.from_url(redis_url)
    doc = make_doc(12, number=int(uuid.uuid4().int % 10**6))
    campaign_store.save(connection, doc)
    for index, view, start, save_now in steps:
        entry = doc.campaign.entries()[index]
        if start and entry.wave is None:
            entry.wave = 0
        record_view(entry, view)
        if save_now:
            campaign_store.save(connection, doc)
            doc = reloaded(connection, doc)  # go on from what Redis holds, like the next tick
            assert doc.campaign.tally == recount(doc.campaign.entries())
    campaign_store.save(connection, doc)
    again = reloaded(connection, doc)
    assert again.campaign.tally == recount(again.campaign.entries()) == doc.campaign.tally
    assert [e.model_dump() for e in again.campaign.entries()] == \
        [e.model_dump() for e in doc.campaign.entries()]
    connection.delete(doc.key)


def test_a_repository_event_writes_one_field_and_the_counters(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    written = {}
    for size in (50, 1000):
        doc = make_doc(size, number=size)
        campaign_store.save(connection, doc)
        doc = reloaded(connection, doc)
        before = {k: v for k, v in connection.hgetall(doc.key).items()}
        entry = doc.campaign.entries()[size // 2]
        entry.wave = 0
        record_view(entry, JobView(state=RepoState.WAITING, gate="plan", batches_total=2))
        written[size] = campaign_store.save(connection, doc)
        after = connection.hgetall(doc.key)
        changed = {k.decode() for k in after if before.get(k) != after[k]}
        assert changed == {f"repo:{entry.name}", "count:state:approved", "count:state:waiting",
                           "count:started"}
        assert reloaded(connection, doc).campaign.repos[entry.name].state is RepoState.WAITING
        connection.delete(doc.key)
    # bytes: one entry and three counters at any size (its place in the rollout has more digits)
    assert abs(written[50] - written[1000]) <= 4 and written[1000] < 600


def test_a_record_in_the_older_format_is_migrated_on_load(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    doc = make_doc(5, number=99)
    doc.campaign.repos["acme/service-0001"].wave = 0
    doc.campaign.repos["acme/service-0001"].state = RepoState.NEEDS_HUMAN
    old = doc.model_dump(mode="json")
    del old["campaign"]["tally"], old["campaign"]["next_order"]
    for entry in old["campaign"]["repos"].values():
        del entry["order"]
    connection.delete(doc.key)
    connection.set(doc.key, CampaignDoc.model_validate(old).model_dump_json(
        exclude={"campaign": {"tally", "next_order"}, "closed_by": True}))
    loaded = reloaded(connection, doc)
    assert loaded.campaign.tally == recount(loaded.campaign.entries())
    assert loaded.campaign.tally["troubled"] == 1 and loaded.campaign.count(RepoState.APPROVED) == 4
    campaign_store.save(connection, loaded)
    assert connection.type(doc.key) == b"hash"
    again = reloaded(connection, doc)
    assert list(again.campaign.repos) == list(doc.campaign.repos)  # the rollout order is kept
    assert again.campaign.tally == loaded.campaign.tally
    connection.delete(doc.key)
