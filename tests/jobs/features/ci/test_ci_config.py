"""The `ci:` block of the config: DESIGN.md's defaults, and bad input named with its fix."""

from __future__ import annotations

import pytest

from jobs.inputs.config import load_config
from jobs.inputs.config_errors import InvalidConfigError


def test_defaults_wait_per_milestone_for_an_hour_on_the_required_checks() -> None:
    ci = load_config("batch_size: 3\n").ci
    assert (ci.wait, ci.checks, ci.timeout, ci.waits) == ("per_milestone", [], 60, True)


def test_every_key_is_read() -> None:
    ci = load_config("ci:\n  wait: per_batch\n  checks: [tests, 'lint / ruff']\n  timeout: 15\n").ci
    assert (ci.wait, ci.checks, ci.timeout) == ("per_batch", ["tests", "lint / ruff"], 15)


@pytest.mark.parametrize("text", ["ci: {wait: off}", "ci: {wait: 'off'}"])
def test_off_is_off_whether_yaml_reads_it_as_a_word_or_as_false(text: str) -> None:
    ci = load_config(text).ci
    assert ci.wait == "off" and not ci.waits


def test_an_empty_ci_block_gives_the_defaults() -> None:
    assert load_config("ci:\n").ci.wait == "per_milestone"


@pytest.mark.parametrize(("text", "field", "words"), [
    ("ci: {wiat: per_batch}", "ci", ["unknown field `ci.wiat`", "did you mean `wait`"]),
    ("ci: {wait: sometimes}", "ci.wait", ["'per_milestone', 'per_batch' or 'off'"]),
    ("ci: {wait: true}", "ci.wait", ["'per_milestone', 'per_batch' or 'off'"]),
    ("ci: {timeout: 0}", "ci.timeout", ["must be at least 1, not 0"]),
    ("ci: {timeout: '5'}", "ci.timeout", ["expected a whole number, got a string"]),
    ("ci: {checks: 5}", "ci.checks", ["expected a list, got a whole number"]),
    ("ci: {checks: ['']}", "ci", ["empty check name"]),
    ("ci: 5", "ci", ["expected a mapping"]),
])
def test_bad_ci_config_names_the_field_and_the_fix(text: str, field: str,
                                                   words: list[str]) -> None:
    with pytest.raises(InvalidConfigError) as caught:
        load_config(text)
    error = caught.value
    assert error.field == field
    assert f"config field `{field}`" in error.message
    for word in words:
        assert word in error.message
    assert "ci: {wait: per_milestone" in error.hint  # the example to copy
