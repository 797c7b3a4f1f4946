"""An issue as a task (jobs/inputs/spec.py): `parse_issue` keeps the title, body and block and
needs a title; `parse_issue_file` reads a local issue file, needs its heading and reports the
spec's problems."""

from __future__ import annotations

import pytest

from jobs.inputs.spec import InvalidSpecError, IssueTask, Recipe, parse_issue, parse_issue_file, parse_spec
from tests.jobs.inputs.spec_kit import LLM, REPLACE, body


def test_parse_issue_keeps_title_body_and_block() -> None:
    task = parse_issue("  Use logging  ", body(REPLACE))
    assert isinstance(task, IssueTask)
    assert task.title == "Use logging"
    assert task.body == body(REPLACE)
    assert task.spec_text == REPLACE
    assert task.spec == parse_spec(body(REPLACE))


def test_parse_issue_needs_a_title() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_issue("  ", body(REPLACE))
    assert caught.value.field == "title"
    assert caught.value.hint


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Use logging\n" + body(LLM), "Use logging"),
        ("\ufeff\n\n# Use logging ##\n" + body(LLM), "Use logging"),
        ("#\tUse  logging  \r\n" + body(LLM), "Use  logging"),
    ],
)
def test_parse_issue_file(text: str, title: str) -> None:
    task = parse_issue_file(text)
    assert task.title == title
    assert task.spec.recipe is Recipe.LLM
    assert not task.body.startswith("#")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Use logging\n" + body(LLM),
        "## Use logging\n" + body(LLM),
        "#\n" + body(LLM),
        "#Use logging\n" + body(LLM),
        "# ##\n" + body(LLM),
    ],
    ids=["empty", "no-heading", "level-two", "empty-heading", "no-space", "only-hashes"],
)
def test_parse_issue_file_needs_a_heading(text: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        parse_issue_file(text)
    assert caught.value.field == "title"
    assert "`# Title`" in caught.value.message
    assert caught.value.hint


def test_parse_issue_file_reports_spec_problems() -> None:
    with pytest.raises(InvalidSpecError, match="`paths`"):
        parse_issue_file("# Goal\n" + body("recipe: llm\ninstructions: x"))
