"""The `campaign:` block of a campaign issue's ```stepwise block, and the ordinary task spec left
for each repository once it is taken out."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jobs.inputs.spec import IssueTask, parse_issue, split_issue_file
from jobs.inputs.spec_block import InvalidSpecError, extract_spec_block
from jobs.inputs.yaml_input import InputProblem, check_keys, load_yaml_mapping, problem_from_validation

CAMPAIGN_KEY = "campaign"
EXAMPLE = """```stepwise
recipe: replace
paths: ["src/**/*.py"]
find: ['\\bprint\\(']
replace: 'log.info('
campaign:
  repositories: ["acme/*"]
  canary: 2
  wave: 10
```"""
_EXAMPLES = {
    "repositories": 'repositories: ["acme/*", "acme/tools"]',
    "canary": "canary: 2",
    "wave": "wave: 10",
    "max_open_prs": "max_open_prs: 50",
    "halt_when_failing": "halt_when_failing: 0.2",
}


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class CampaignSettings(BaseModel):
    """Which repositories a campaign covers and how fast it rolls out."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    repositories: list[str] = Field(default_factory=list, max_length=1000)
    """Repository names or globs on names (`acme/*`); locally, the checkouts given on the command
    line are the candidates and these filter them by directory name when set."""
    topics: list[str] = Field(default_factory=list, max_length=50)
    """Only repositories with at least one of these topics."""
    languages: list[str] = Field(default_factory=list, max_length=50)
    """Only repositories whose main language is one of these (case-insensitive)."""
    exclude: list[str] = Field(default_factory=list, max_length=1000)
    """Names or globs taken out."""
    canary: int = Field(default=2, ge=0, le=100)
    """Repositories started first; the rest waits until they settle without a halt."""
    wave: int = Field(default=10, ge=1, le=1000)
    """Repositories started together after the canaries, wave by wave."""
    max_open_prs: int = Field(default=50, ge=1, le=10000)
    """Repositories whose job is open (started and not ended) at any time, at most."""
    halt_when_failing: float = Field(default=0.2, gt=0, le=1)
    """The campaign halts when more than this share of started repositories needs a human."""

    @field_validator("repositories", "topics", "languages", "exclude", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return _as_list(value)

    @field_validator("repositories", "topics", "languages", "exclude")
    @classmethod
    def _no_blank(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("entries must not be empty")
        return [item.strip() for item in value]


class CampaignTask(BaseModel):
    """A campaign issue: its settings and the ordinary task every repository's job runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    settings: CampaignSettings
    task: IssueTask


def _error(problem: InputProblem) -> InvalidSpecError:
    field = f"{CAMPAIGN_KEY}.{problem.field}" if problem.field else CAMPAIGN_KEY
    return InvalidSpecError(f"spec field `{field}`: {problem.problem}", hint=problem.hint,
                            field=field)


def parse_campaign_settings(data: Any) -> CampaignSettings:
    if not isinstance(data, dict):
        raise _error(InputProblem(None, "must be a mapping of campaign settings",
                                  f"write it as a block, e.g.\n{EXAMPLE}"))
    try:
        check_keys(data, list(CampaignSettings.model_fields))
        # YAML gives ints for `1`; strict floats refuse them, so widen before validating.
        if isinstance(data.get("halt_when_failing"), int) and not isinstance(
                data.get("halt_when_failing"), bool):
            data = {**data, "halt_when_failing": float(data["halt_when_failing"])}
        return CampaignSettings.model_validate(data)
    except InputProblem as problem:
        raise _error(problem) from None
    except ValidationError as exc:
        raise _error(problem_from_validation(exc, _EXAMPLES)) from None


def repository_body(body: str, spec_data: dict[str, Any]) -> str:
    """The issue body each repository's job sees: the ```stepwise block without `campaign`."""
    block = yaml.safe_dump(spec_data, sort_keys=False, allow_unicode=True, width=1000)
    return f"```stepwise\n{block}```\n"


def parse_campaign_issue(title: str, body: str) -> CampaignTask:
    """A campaign issue's settings and task; InvalidSpecError naming the field on any problem."""
    text = extract_spec_block(body)
    try:
        data = load_yaml_mapping(text, example=EXAMPLE)
    except InputProblem as problem:
        raise InvalidSpecError(f"the ```stepwise block: {problem.problem}", hint=problem.hint,
                               field=problem.field) from None
    if CAMPAIGN_KEY not in data:
        raise InvalidSpecError(
            "the ```stepwise block has no `campaign:` block, so it is an ordinary job",
            hint=f"add a `campaign:` block naming the repositories, e.g.\n{EXAMPLE}",
            field=CAMPAIGN_KEY)
    settings = parse_campaign_settings(data.pop(CAMPAIGN_KEY))
    return CampaignTask(settings=settings, task=parse_issue(title, repository_body(body, data)))


def parse_campaign_text(text: str) -> CampaignTask:
    """Local mode: a Markdown file whose first line is `# Title`, the rest being the body."""
    return parse_campaign_issue(*split_issue_file(text))
