"""The `ci:` block of `.github/stepwise.yml`: whether and how a job waits for the repository's
own CI (server mode; local mode has no CI and ignores it)."""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CiWaitMode = Literal["per_milestone", "per_batch", "off"]
CI_KEYS = ("wait", "checks", "timeout")


class CiConfig(BaseModel):
    """`ci:` in `.github/stepwise.yml`; each field's docstring is its README row."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    wait: CiWaitMode = "per_milestone"
    """When to wait for the repository's CI (server mode): `per_milestone` (the milestone gate
    opens once the milestone head's required checks pass), `per_batch` (a batch is completed
    only once its own commit's checks pass; a red check withdraws it) or `off`."""
    checks: list[str] = Field(default=[], max_length=100)
    """Check names that must pass; empty: the base branch's required status checks, else every
    check on the commit except Stepwise's own."""
    timeout: int = Field(default=60, ge=1, le=7 * 24 * 60)
    """Minutes a required check may stay pending before the `ci_failed` gate opens."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if data is None:  # `ci:` with nothing under it
            return {}
        if isinstance(data, dict):
            if data.get("wait") is False:  # YAML 1.1 reads a bare `off` as false
                data = {**data, "wait": "off"}
            for key in data:
                if key not in CI_KEYS:
                    close = difflib.get_close_matches(str(key), CI_KEYS, n=1)
                    guess = f"did you mean `{close[0]}`? " if close else ""
                    raise ValueError(f"unknown field `ci.{key}` ({guess}valid fields: "
                                     f"{', '.join(CI_KEYS)})")
            names = data.get("checks")
            if isinstance(names, str):  # one check name where a list goes
                data = {**data, "checks": [names]}
                names = data["checks"]
            if isinstance(names, list) and any(isinstance(n, str) and not n.strip()
                                               for n in names):
                raise ValueError("`ci.checks` holds an empty check name; write each check's "
                                 "name as GitHub shows it, e.g. `tests / pytest`")
        elif not isinstance(data, CiConfig):
            raise ValueError("expected a mapping such as `{wait: per_milestone, timeout: 60}`")
        return data

    @property
    def waits(self) -> bool:
        return self.wait != "off"
