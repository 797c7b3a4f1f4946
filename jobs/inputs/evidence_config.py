"""The `evidence:` and `gates:` blocks of `.github/stepwise.yml`: what Stepwise measures about
each batch besides green (changed-line coverage, ...) and which gates may pass on their own
(jobs/features/evidence reads them)."""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CoverageMode = Literal["auto", "off"]
EVIDENCE_KEYS = ("coverage", "min_changed_coverage")
GATES_KEYS = ("auto_approve_known_shapes",)


def known_keys(block: str, keys: tuple[str, ...], data: Any, example: str) -> Any:
    """`data` when it is a mapping of `keys` only (None: the block is empty); else the error
    naming the unknown key and the closest known one."""
    if data is None:  # `evidence:` with nothing under it
        return {}
    if isinstance(data, dict):
        for key in data:
            if key not in keys:
                close = difflib.get_close_matches(str(key), keys, n=1)
                guess = f"did you mean `{close[0]}`? " if close else ""
                raise ValueError(f"unknown field `{block}.{key}` ({guess}valid fields: "
                                 f"{', '.join(keys)})")
        return data
    if isinstance(data, BaseModel):
        return data
    raise ValueError(f"expected a mapping such as `{example}`")


class EvidenceConfig(BaseModel):
    """`evidence:` in `.github/stepwise.yml`; each field's docstring is its README row."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    coverage: CoverageMode = "auto"
    """Run the validation that accepts a batch under coverage where the runner allows it
    (coverage.py for Python, `NODE_V8_COVERAGE` for node), limited to the batch's files, and
    report the changed lines the tests ran: `auto` or `off`."""
    min_changed_coverage: int | None = Field(default=None, ge=0, le=100)
    """A percent: a batch whose tests ran fewer of its changed lines stops at the
    `uncovered_change` gate; unset: reported only."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("coverage") is False:  # YAML 1.1 reads `off` so
            data = {**data, "coverage": "off"}
        return known_keys("evidence", EVIDENCE_KEYS, data,
                          "{coverage: auto, min_changed_coverage: 80}")


class GatesConfig(BaseModel):
    """`gates:` in `.github/stepwise.yml`; each field's docstring is its README row."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)

    auto_approve_known_shapes: bool = False
    """A milestone whose hunks all have edit shapes approved at an earlier gate, that is green,
    covered (`evidence.min_changed_coverage`) and weakens no test passes its `milestone` gate
    on its own (the card says so)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return known_keys("gates", GATES_KEYS, data, "{auto_approve_known_shapes: true}")
