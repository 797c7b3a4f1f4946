"""A mode-level feature takes part in the server through its plug alone (`ServerPlug`,
bot/server/plug.py; one line of bot/server/plugs.py): a plug made here takes the label it owns,
the issue events it holds (before the job on that issue sees them), the comment verb it serves
and each reconciler pass, through the real worker and webhooks. Campaigns, the plug the server
composes, are told through the App in tests/bot/test_app_campaign*.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.commands import Access, ArgumentRule, Command, CommandContext, CommandSpec
from bot.commands.registry import register, unregister
from bot.events import Event
from bot.server import plugs, reconciler
from bot.server.context import ServerContext
from bot.server.plug import ServerPlug
from jobs.inputs.config import RepoConfig
from jobs.kernel.job import Job
from jobs.kernel.model import JobStatus
from tests.bot.conftest import REPO, World

LABEL = "toy-label"


class Toy:
    """A plug that says what it was asked."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def labeled(self, ctx: ServerContext, event: Event, config: RepoConfig) -> bool:
        if event.label != LABEL:
            return False
        self.seen.append(f"labeled #{event.number}")
        return True

    def closed(self, ctx: ServerContext, event: Event) -> bool:
        self.seen.append(f"closed #{event.number}")
        return True

    def reconcile(self, ctx: ServerContext) -> None:
        self.seen.append("reconcile")

    def verb(self, ctx: ServerContext, event: Event, argument: str) -> str:
        self.seen.append(f"toy {argument}")
        return f"the toy heard {argument!r} from @{event.sender}"


def handle(context: CommandContext, job: Job | None, command: Command) -> str:
    return context.plugged(command)


SPEC = CommandSpec(verb="toy", usage="toy <words>", summary="talk to the toy plug",
                   argument=ArgumentRule.REQUIRED_TEXT, handle=handle, access=Access.ANYONE,
                   needs_job=False)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Toy]:
    made = Toy()
    monkeypatch.setattr(plugs, "PLUGS", (ServerPlug(
        labeled=made.labeled, issue_closed=made.closed, reconcile=made.reconcile,
        verbs={"toy": made.verb}),))
    register(SPEC)  # the verb's line in COMMANDS
    yield made
    unregister("toy")


def test_a_plug_takes_its_label_its_issue_events_its_verb_and_each_reconciler_pass(
        world: World, toy: Toy) -> None:
    world.send("issues.labeled", issue_number=1, label=LABEL, sender="maria")
    world.work()
    assert toy.seen == ["labeled #1"]
    assert world.ctx.store.find(REPO, 1) is None  # the plug's label started no job
    world.send("issues.labeled", issue_number=1, sender="maria")  # the trigger label
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN  # not the plug's: a job started
    world.comment("/stepwise toy hello", by="rita")  # read permission: the plug decides
    world.work()
    assert any("the toy heard 'hello' from @rita" in body for body in world.bodies(1))
    world.send("issues.closed", issue_number=1, sender="maria")
    world.work()
    assert world.job().status is JobStatus.AWAITING_HUMAN  # the plug held the issue
    reconciler.run_pass(world.ctx)
    assert toy.seen == ["labeled #1", "toy hello", "closed #1", "reconcile"]
