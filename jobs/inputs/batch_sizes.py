"""Batch sizes: a number, or `auto` (grown while batches pass, shrunk after a failure, up to
`batch_size_max`). The type both the config and the spec block accept, and the size a plan
starts with (pure)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticKnownError

AUTO = "auto"
AUTO_START = 2  # `batch_size: auto` plans its first batch with this many files
_NUMBER = TypeAdapter(Annotated[int, Field(ge=1, le=100, strict=True)])


def _number_or_auto(value: Any) -> Any:
    """`auto`, or a whole number from 1 to 100 with the error a plain number field gives (one
    error naming the field, not one per alternative of the union)."""
    if value == AUTO:
        return value
    try:
        return _NUMBER.validate_python(value)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise PydanticKnownError(error["type"], error.get("ctx")) from None  # type: ignore[arg-type]


BatchSize = Annotated[int | Literal["auto"], BeforeValidator(_number_or_auto)]


def planned_batch_size(spec_size: int | str | None, config_size: int | str, *,
                       spec_max: int | None, config_max: int) -> int:
    """The size a plan groups files by: the spec's over the config's; `auto` starts small."""
    size = spec_size if spec_size is not None else config_size
    if size == AUTO:
        return min(AUTO_START, batch_size_limit(spec_max, config_max))
    return int(size)


def is_auto(spec_size: int | str | None, config_size: int | str) -> bool:
    return (spec_size if spec_size is not None else config_size) == AUTO


def batch_size_limit(spec_max: int | None, config_max: int) -> int:
    return spec_max if spec_max is not None else config_max
