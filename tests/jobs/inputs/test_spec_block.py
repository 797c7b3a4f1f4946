"""Reading the ```stepwise block of an issue (jobs/inputs/spec_block.py): which fence is taken,
the fence errors, the hint for a missing block, and the dedent of an indented block."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobs.basics.errors import SpecError
from jobs.inputs.spec import InvalidSpecError, extract_spec_block, parse_spec
from jobs.inputs.spec_block import has_spec_block
from tests.jobs.inputs.spec_kit import body


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (body("a: 1"), "a: 1"),
        (body("a: 1", fence="~~~"), "a: 1"),
        (body("a: 1", fence="````"), "a: 1"),
        (body("a: 1", info="Stepwise  "), "a: 1"),
        (body("a: 1", info=" stepwise"), "a: 1"),
        ("```yaml\nb: 2\n```\n```stepwise\na: 1\n```\n", "a: 1"),
        ("````markdown\n```stepwise\nb: 2\n```\n````\n```stepwise\na: 1\n```", "a: 1"),
        ("~~~\n```stepwise\nb: 2\n```\n~~~\n```stepwise\na: 1\n```", "a: 1"),
        ("<!--\n```stepwise\nb: 2\n```\n-->\n```stepwise\na: 1\n```", "a: 1"),
        ("```stepwise\na: 1\n~~~\n```\n", "a: 1\n~~~"),
        ("````stepwise\na: 1\n```\n````\n", "a: 1\n```"),
        ("  ```stepwise\n  a:\n    - 1\n  ```\n", "a:\n  - 1"),
        ("```stepwise\r\na: 1\r\n```\r\n", "a: 1"),
    ],
    ids=[
        "backticks",
        "tildes",
        "four-backticks",
        "case-and-trailing-space",
        "leading-space",
        "yaml-fence-ignored",
        "nested-in-markdown-fence",
        "nested-in-tilde-fence",
        "html-comment-ignored",
        "other-char-does-not-close",
        "shorter-fence-does-not-close",
        "indented-fence",
        "crlf",
    ],
)
def test_fence_extraction(markdown: str, expected: str) -> None:
    assert extract_spec_block(markdown) == expected


@pytest.mark.parametrize(
    ("markdown", "fragment"),
    [
        ("No spec here.", "no ```stepwise block was found"),
        ("```yaml\nrecipe: llm\n```", "no ```stepwise block was found"),
        ("```markdown\n```stepwise\na: 1\n```\n```", "no ```stepwise block was found"),
        ("    ```stepwise\n    a: 1\n    ```", "no ```stepwise block was found"),
        ("```stepwise yaml\na: 1\n```", "no ```stepwise block was found"),
        ("> ```stepwise\n> a: 1\n> ```", "no ```stepwise block was found"),
        ("```stepwise\na: 1\n", "never closed"),
        ("````stepwise\na: 1\n```\n", "never closed"),
        (body("a: 1") + body("b: 2"), "found 2 ```stepwise blocks"),
        (body("a: 1") + body("b: 2", fence="~~~"), "found 2 ```stepwise blocks"),
    ],
    ids=[
        "none",
        "yaml-only",
        "inside-unclosed-fence",
        "indented-code",
        "extra-info-word",
        "quoted",
        "unterminated",
        "unterminated-longer",
        "two-blocks",
        "two-mixed",
    ],
)
def test_fence_errors(markdown: str, fragment: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        extract_spec_block(markdown)
    assert fragment in caught.value.message
    assert caught.value.field is None
    assert caught.value.hint.strip()


def test_missing_block_hint_shows_a_minimal_example() -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec("Just prose.")
    assert "```stepwise\nrecipe: replace\npaths:" in caught.value.hint


def test_dedent_of_indented_blocks_is_limited_to_the_fence_indent() -> None:
    text = textwrap.dedent(
        """\
          ~~~stepwise
        recipe: llm
           paths: [a]
          ~~~
        """
    )
    assert extract_spec_block(text) == "recipe: llm\n paths: [a]"


# Whether an issue has a spec block (the server drafts one when it has not, local mode asks the
# model) is read exactly as the block itself is read: the two never disagree.
@pytest.mark.parametrize(
    ("markdown", "has"),
    [
        (body("a: 1"), True),
        (body("a: 1", fence="~~~", info=" Stepwise "), True),
        ("```stepwise\na: 1\n", True),  # left open: reading it names the missing fence
        ("<!-- an example:\n```stepwise\na: 1\n```\n-->\nPlease fix the logging.", False),
        ("````markdown\n```stepwise\na: 1\n```\n````\n", False),  # quoted in another block
        ("~~~\n```stepwise\na: 1\n```\n~~~\n", False),
        ("```yaml\na: 1\n```\n", False),
        ("Use a ```stepwise block, e.g. `stepwise`.", False),
        ("    ```stepwise\n    a: 1\n    ```\n", False),  # indented code, not a fence
    ],
)
def test_has_spec_block_agrees_with_reading_the_block(markdown: str, has: bool) -> None:
    assert has_spec_block(markdown) is has
    try:
        extract_spec_block(markdown)
        found = True
    except InvalidSpecError as exc:
        found = "no ```stepwise block was found" not in exc.message
    assert found is has


LINES = ["```stepwise", "~~~stepwise", "```", "~~~", "````", "<!--", "-->", "a: 1", "",
         "````markdown", "  ```stepwise", "text <!-- x -->", "```yaml"]


@given(st.lists(st.sampled_from(LINES), max_size=12))
def test_has_spec_block_agrees_on_any_mix_of_fences(lines: list[str]) -> None:
    markdown = "\n".join(lines)
    try:
        extract_spec_block(markdown)
        found = True
    except InvalidSpecError as exc:
        found = "no ```stepwise block was found" not in exc.message
    assert has_spec_block(markdown) is found
