"""Fuzzed comment bodies for the command parser: command lines with every prefix and verb,
quotes, fences and HTML comments, odd line endings, bodies past the size limit; and what
`parse_comment` must do (no exception, at most MAX_COMMANDS commands)."""

from __future__ import annotations

from hypothesis import strategies as st

from bot.commands import MAX_COMMANDS, ParsedCommand, parse_comment
from bot.commands.registry import COMMANDS
from tests.kit.fuzz_values import SLUG, Unexpected

VERBS = [spec.verb for spec in COMMANDS]
_COMMENT_LINES = st.one_of(
    st.builds(lambda p, v, a: f"{p}{v} {a}".rstrip(),
              st.sampled_from(["/stepwise ", "/Stepwise ", "@stepwise ", "@stepwise[bot] ", "   /stepwise ",
                               "> /stepwise ", "    /stepwise ", "- /stepwise ", "/stepwise", "@other "]),
              st.one_of(st.sampled_from(VERBS), st.text(max_size=12)),
              st.one_of(st.just(""), st.integers().map(str), st.text(max_size=30))),
    st.sampled_from(["```", "~~~~", "   ```python", "- ```", "````", "<!--", "-->", "`<!--`",
                     "<!-- /stepwise approve -->", "`` ` ``", "> ```", "\t```", ""]),
    st.text(max_size=60),
)


@st.composite
def comment_bodies(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_COMMENT_LINES, max_size=20))
    separator = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    body = separator.join(lines)
    if draw(st.integers(min_value=0, max_value=30)) == 0:  # now and then, past the size limit
        body = body + separator + "x" * 70_000 + separator + "/stepwise approve"
    return body


def check_comment(body: str) -> list[ParsedCommand]:
    try:
        found = parse_comment(body, app_slug=SLUG)
    except Exception as exc:
        raise Unexpected(f"parse_comment raised {exc!r} on {body[:200]!r}") from exc
    if len(found) > MAX_COMMANDS:
        raise Unexpected(f"{len(found)} commands returned, more than {MAX_COMMANDS}")
    return found
