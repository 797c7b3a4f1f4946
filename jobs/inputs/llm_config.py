"""The `llm:` block of `.github/stepwise.yml`: how the model edits this repository's batches
(recipe `llm`, and a command's `fallback: llm`); unset keys keep the `STEPWISE_LLM_*` settings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

EditFormat = Literal["tools", "search_replace", "whole", "diff"]
LLM_KEYS = ("edit_format", "restate_every")


class LlmConfig(BaseModel):
    """`llm:` in `.github/stepwise.yml`; each field's docstring is its README row."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    edit_format: EditFormat | None = None
    """How the model edits: `tools` (function calls: read, search, edit, run the checks),
    `search_replace` (blocks), `whole` (whole files) or `diff` (a unified diff); unset:
    `STEPWISE_LLM_EDIT_FORMAT` (default `tools`, `search_replace` where the server has no
    function calling)."""
    restate_every: int | None = Field(default=None, ge=0, le=1000)
    """With `tools`: turns between restatements of the goal, the not-doing list and the remaining
    targets (0: never); unset: `STEPWISE_LLM_RESTATE_EVERY` (default 8)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if data is None:  # `llm:` with nothing under it
            return {}
        if isinstance(data, dict):
            unknown = [str(key) for key in data if key not in LLM_KEYS]
            if unknown:
                raise ValueError(f"unknown field `llm.{unknown[0]}` (valid fields: "
                                 f"{', '.join(LLM_KEYS)})")
        elif not isinstance(data, LlmConfig):
            raise ValueError("expected a mapping such as `{edit_format: search_replace}`")
        return data

    def overrides(self) -> dict[str, Any]:
        """The keys this repository sets, for the model settings."""
        return {key: value for key, value in self.model_dump().items() if value is not None}
