"""The `Stepwise config` check run renders the config's own text as data (issue 40): a pushed
`.github/stepwise.yml` whose keys and values carry links, mentions, HTML and Markdown gets a
failing check whose summary, parsed with a CommonMark parser, makes none of them live."""

from __future__ import annotations

from jobs.inputs.config import CONFIG_PATH
from tests.bot.conftest import World
from tests.bot.test_app_config_check import config_runs, push
from tests.security.test_markdown_safe import _assert_inert, _visible

HOSTILE_CONFIG = """"[click me](https://evil.example/a)": 1
"a` [pay here](https://evil.example/pay) @octo-org/admins `b": 4
"@octo-org/admins <img src=x onerror=alert(1)>": 2
"# Approved by security": 3
trigger_label: "**urgent** see https://evil.example and [details](https://evil.example)"
batch_size: "<!-- hidden --> ![x](https://evil.example/i.png)"
"""


def test_a_hostile_config_renders_nothing_live_in_its_check_run(world: World) -> None:
    sha = push(world, "tune-stepwise", {CONFIG_PATH: HOSTILE_CONFIG})
    [run] = config_runs(world, sha)
    assert run.conclusion == "failure"
    visible, tokens = _visible(run.summary)
    _assert_inert(tokens)
    assert {t.type for t in tokens}.isdisjoint({"heading_open", "strong_open", "em_open"})
    assert "click me" in visible and "pay here" in visible  # shown, as text
