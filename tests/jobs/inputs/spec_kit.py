"""Shared inputs of the task-spec tests (no tests here): one minimal spec per recipe, an issue
body around a fenced block, and the error a spec raises."""

from __future__ import annotations

import pytest

from jobs.inputs.spec import InvalidSpecError, parse_spec

REPLACE = "recipe: replace\npaths: ['src/**/*.py']\nfind: ['\\bprint\\(']\nreplace: 'log.info('"
COMMAND = "recipe: command\npaths: ['src/**/*.py']\nrun: ruff check --fix {files}"
LLM = "recipe: llm\npaths: ['src/**/*.py']\ninstructions: Use the module logger."


def body(yaml_text: str, *, fence: str = "```", info: str = "stepwise") -> str:
    return f"Please do this.\n\n{fence}{info}\n{yaml_text}\n{fence}\n\nThanks!\n"


def spec_error(yaml_text: str) -> InvalidSpecError:
    with pytest.raises(InvalidSpecError) as caught:
        parse_spec(body(yaml_text))
    return caught.value
