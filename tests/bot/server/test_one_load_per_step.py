"""One load per step (issue 29, item 7), counted on a real Redis through the App: from a
maintainer's `/stepwise approve` at the plan gate to the first batch pushed and the milestone
gate, each worker task (the comment, then each step) reads the record once and validates the
task spec once, and every save changes the record (a step's closing save is left out when the
step saved already and nothing changed since: `RedisStore.unchanged`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.server import worker
from jobs.inputs import spec as spec_module
from jobs.kernel.job import Job
from jobs.kernel.model import Gate
from tests.bot.conftest import World


@dataclass
class Task:
    """What one worker task did with the record."""

    name: str
    loads: int = 0
    specs: int = 0
    writes: int = 0
    unchanged_writes: int = 0
    status_reads: int = 0
    last: dict[str, Any] = field(default_factory=dict)


def content(job: Job) -> dict[str, Any]:
    """The record but its bookkeeping (version, the time of the save)."""
    return job.model_dump(mode="json", exclude={"version", "updated_at"})


@pytest.fixture
def tasks(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Task]]:
    """Every worker task's counts, from the store port of the world's context (instrumented)."""
    done: list[Task] = []
    store = world.ctx.store
    load_id, save, stored_status = store.load_id, store.save, store.stored_status
    registered = spec_module.registered

    def counted_load(job_id: str) -> Job | None:
        job = load_id(job_id)
        if done and job is not None and not checking:
            done[-1].loads += 1
            done[-1].last = content(job)
        return job

    checking: list[bool] = []  # in a save: the store's own read-back (STORE_CHECK) is not a load

    def counted_save(job: Job, **options: Any) -> Job:
        version = job.version
        checking.append(True)
        try:
            saved = save(job, **options)
        finally:
            checking.pop()
        if done:
            task = done[-1]
            if saved.version != version:
                task.writes += 1
                task.unchanged_writes += content(saved) == task.last
                task.last = content(saved)
        return saved

    def counted_status(job: Job) -> Any:
        if done:
            done[-1].status_reads += 1
        return stored_status(job)

    def counted_spec() -> Any:
        # Each validation of a TaskSpec asks once from its recipe field's validator.
        if done and not checking and sys._getframe(1).f_code.co_name == "_registered_recipe":
            done[-1].specs += 1
        return registered()

    monkeypatch.setattr(store, "load_id", counted_load)
    monkeypatch.setattr(store, "save", counted_save)
    monkeypatch.setattr(store, "stored_status", counted_status)
    monkeypatch.setattr(spec_module, "registered", counted_spec)

    def segmented(name: str, handler: Callable[[dict[str, Any]], None]
                  ) -> Callable[[dict[str, Any]], None]:
        def run(payload: dict[str, Any]) -> None:
            done.append(Task(name))
            handler(payload)
        return run

    monkeypatch.setattr(worker, "_handlers", {name: segmented(name, handler)
                                              for name, handler in worker._handlers.items()})
    yield done


def test_approve_to_push_loads_the_record_once_per_task(world: World, tasks: list[Task]) -> None:
    world.send("issues.labeled", issue_number=1, sender="maria")
    world.work()
    assert world.job().gate.kind is Gate.PLAN
    tasks.clear()
    world.comment("/stepwise approve", by="maria")
    world.work()
    tasks.append(Task("the test's own reads"))
    job = world.job()
    assert job.batches[0].commit is not None and job.gate.kind is Gate.MILESTONE  # pushed
    tasks.pop()
    names = [task.name for task in tasks]
    assert names[0] == "event" and names.count("advance") >= 2, names
    for task in tasks:
        assert task.loads <= 1, task
        assert task.specs == task.loads, task  # the spec is validated with the record, once
        assert task.unchanged_writes == 0, task  # every write recorded a change
    steps = [task for task in tasks if task.name == "advance"]
    assert all(task.loads == 1 and task.writes >= 1 for task in steps), steps
