"""What a mode-level feature (one that is no part of a job's loop: campaigns) may plug into the
server: `ServerPlug`, its hooks at the server's named points. The plugs are composed in
bot/server/plugs.py, one line each; the event tasks, the comment commands and the reconciler
run their hooks and never import a plug."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bot.events import Event
from bot.server.context import ServerContext
from jobs.inputs.config import RepoConfig

# (context, the event, the repository's config) -> True when the label was the plug's to take.
LabelHook = Callable[[ServerContext, Event, RepoConfig], bool]
# (context, the event) -> True when the issue is the plug's (no job's handling follows).
IssueHook = Callable[[ServerContext, Event], bool]
# (context, the comment's event, the verb's argument) -> the reply.
VerbHook = Callable[[ServerContext, Event, str], str]


def _not_its_label(ctx: ServerContext, event: Event, config: RepoConfig) -> bool:
    return False


def _not_its_issue(ctx: ServerContext, event: Event) -> bool:
    return False


def _nothing(ctx: ServerContext) -> None:
    return None


@dataclass(frozen=True)
class ServerPlug:
    """One mode-level feature's part of the server, each hook asked in the order of the plugs'
    tuple (the first that takes an event has it)."""

    labeled: LabelHook = _not_its_label  # a label added, looked at before the trigger label
    issue_closed: IssueHook = _not_its_issue
    issue_reopened: IssueHook = _not_its_issue
    issue_edited: IssueHook = _not_its_issue
    reconcile: Callable[[ServerContext], None] = _nothing  # each reconciler pass
    # The comment verbs it serves (their specs are lines of bot/commands/registry.py, whose
    # handlers hand the command on with `CommandContext.plugged`).
    verbs: Mapping[str, VerbHook] = field(default_factory=dict)
