"""The command registry (bot/commands/registry.py): the verbs in DESIGN.md's order, one module
per verb, each verb's argument rule, looking up an unknown verb, and the help table (as in
DESIGN.md, and with a mention prefix)."""

from __future__ import annotations

import importlib

import pytest

from bot.commands import COMMANDS, ArgumentRule, CommandSpec, help_table, spec_for

VERBS = ("approve", "retry", "skip", "cancel", "revert", "instruct", "status", "help")

# Copied from DESIGN.md, "Gates, commands and exit codes".
DESIGN_TABLE = """\
| command | effect |
|---|---|
| `/stepwise approve` | pass the open gate as the table says |
| `/stepwise retry` | retry the paused batch, attempts counter reset |
| `/stepwise skip <reason>` | mark the paused batch `skipped` with the reason, go on |
| `/stepwise cancel` | queued job: cancelled at once; running: stop at the next safe point |
| `/stepwise revert <batch>` | add a revert commit for that batch, mark it `reverted` |
| `/stepwise instruct <text>` | add a standing instruction for later llm batches \
(kept in the record and the note) |
| `/stepwise status` | reply with the progress card |
| `/stepwise help` | reply with this table |"""


def test_registry_follows_design_order() -> None:
    # DESIGN's verbs first, in its order; a verb added later follows them.
    assert tuple(spec.verb for spec in COMMANDS)[: len(VERBS)] == VERBS


@pytest.mark.parametrize("verb", VERBS)
def test_one_module_per_verb(verb: str) -> None:
    spec: CommandSpec = importlib.import_module(f"bot.commands.{verb}").SPEC
    assert spec.verb == verb
    assert spec.usage.split()[0] == verb
    assert spec_for(verb) is spec
    assert spec_for(verb.upper()) is spec
    assert (spec.argument is ArgumentRule.NONE) == (spec.placeholder == "")


def test_argument_rules() -> None:
    rules = {spec.verb: spec.argument for spec in COMMANDS if spec.verb in VERBS}
    assert rules == {
        "approve": ArgumentRule.NONE,
        "retry": ArgumentRule.NONE,
        "skip": ArgumentRule.REQUIRED_TEXT,
        "cancel": ArgumentRule.NONE,
        "revert": ArgumentRule.BATCH_NUMBER,
        "instruct": ArgumentRule.REQUIRED_TEXT,
        "status": ArgumentRule.NONE,
        "help": ArgumentRule.NONE,
    }


@pytest.mark.parametrize("word", ["", "aprove", "hold", "/stepwise"])
def test_spec_for_unknown(word: str) -> None:
    assert spec_for(word) is None


def test_help_table_matches_design() -> None:
    design = DESIGN_TABLE.splitlines()
    assert help_table().splitlines()[: len(design)] == design  # a later verb's row follows


def test_help_table_with_mention_prefix() -> None:
    table = help_table("@stepwise-bot")
    skip_row = "| `@stepwise-bot skip <reason>` | mark the paused batch `skipped` with the reason, go on |"
    assert skip_row in table.splitlines()
    assert "/stepwise" not in table
    assert len(table.splitlines()) == 2 + len(COMMANDS)
