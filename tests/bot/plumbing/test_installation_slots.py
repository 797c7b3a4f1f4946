"""The per-installation running limit: an installation's jobs share its slots, whatever their repository."""

from __future__ import annotations

import redis

from bot.plumbing.leases import InstallationSlots, RepoSlots
from bot.settings import Settings


def always(_job: str) -> bool:
    return True


def test_an_installation_runs_at_most_its_limit_and_wakes_the_next(client: redis.Redis
                                                                    ) -> None:
    first, other = InstallationSlots(client, 1, 2), InstallationSlots(client, 2, 2)
    assert first.acquire("a-repo1", still_running=always) == 0
    assert first.acquire("b-repo2", still_running=always) == 0
    assert first.acquire("c-repo3", still_running=always) == 1  # waits, whatever its repo
    assert first.acquire("d-repo4", still_running=always) == 2
    assert other.acquire("e-repo5", still_running=always) == 0  # another installation runs
    assert first.release("a-repo1") == "c-repo3"
    assert first.acquire("c-repo3", still_running=always) == 0
    assert first.acquire("d-repo4", still_running=always) == 1


def test_a_holder_that_stopped_running_frees_its_slot(client: redis.Redis) -> None:
    slots = InstallationSlots(client, 7, 1)
    assert slots.acquire("gated", still_running=always) == 0
    assert slots.acquire("next", still_running=always) == 1
    assert slots.acquire("next", still_running=lambda job: job != "gated") == 0


def test_installation_slots_do_not_share_keys_with_a_repository(client: redis.Redis
                                                                ) -> None:
    InstallationSlots(client, 3, 1).acquire("job-1", still_running=always)
    assert RepoSlots(client, "octo/three", 1).acquire("job-2", still_running=always) == 0


def test_the_limit_is_off_unless_set() -> None:
    base = {"app_id": 1, "private_key": "k", "webhook_secret": "s"}
    assert Settings(**base).installation_running_limit() is None  # type: ignore[arg-type]
    limited = Settings(**base, max_running_per_installation=4)  # type: ignore[arg-type]
    assert limited.installation_running_limit() == 4
