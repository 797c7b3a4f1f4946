"""Every command a campaign prints runs as printed (issue 41.3): its preview, its gates and its
dashboard file, from real runs of the CLI at an 80-column terminal over checkouts whose paths
hold spaces and outgrow the line, checked as tests/bot/test_printed_commands.py checks the
job's commands."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from jobs.local_campaigns import default_state_dir
from tests.bot.test_printed_commands import (
    MENTION,
    PLACE,
    WIDTH,
    each_parses_and_stands_whole,
    parse,
)
from tests.jobs.features.campaigns.test_local_campaign import checkout
from tests.jobs.features.campaigns.test_local_campaign import issue as campaign_issue
from tests.kit.local_e2e import cli


def test_every_command_a_campaign_prints_parses_and_stands_whole(tmp_path: Path) -> None:
    place = tmp_path / PLACE
    outputs: dict[str, str] = {}
    fleet = [checkout(place, "one repo"), checkout(place, "two repo", broken=True)]
    plan_file = campaign_issue(tmp_path, "canary: 2\n  wave: 2")
    preview = cli("campaign", "--issue", plan_file, *fleet, env=WIDTH)
    assert preview.code == 3, preview.text
    outputs["campaign preview"] = preview.out
    started = cli("campaign", "--issue", plan_file, "--command", "approve all", env=WIDTH)
    assert started.code == 4, started.text
    outputs["campaign gates"] = started.out
    dashboard = (default_state_dir(plan_file) / "dashboard.md").read_text()
    outputs["dashboard file"] = "\n".join(
        f"  {span}" for span in re.findall(r"`([^`]+)`", dashboard) if MENTION.match(span))
    each_parses_and_stands_whole(outputs, {
        "campaign preview": f"stepwise campaign --issue {plan_file} --command 'approve all'",
        "campaign gates": f"stepwise campaign --issue {plan_file} --command retry-failed",
        "dashboard file": f"stepwise retry --repo {shlex.quote(str(fleet[1]))} --number 1",
    })


def test_a_campaign_command_s_quoted_placeholders_pass_the_check() -> None:
    parse("stepwise campaign --issue plan.md --command 'skip REPO REASON'")
