"""Tables of every spec and config key, generated from the pydantic models themselves (the docs
site's reference pages, scripts/docs_reference.py).

Each field's docstring is its meaning; the type, default and bounds come from the field, so
the reference cannot drift from the code (tests/test_docs_site.py checks them).
"""

from __future__ import annotations

import json
import types
from enum import Enum, StrEnum
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Le, MaxLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from jobs.inputs.config import RepoConfig
from jobs.inputs.recipes import recipes_in_words, registered
from jobs.inputs.spec import TaskSpec

HEADER = "| key | type | default | meaning |\n|---|---|---|---|"


def type_words(annotation: Any) -> str:
    """How a YAML writer would call the type: "list of strings", "true, false or "ask""."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        parts = [arg for arg in get_args(annotation) if arg is not type(None)]
        if any(isinstance(arg, type) and issubclass(arg, StrEnum) for arg in parts):
            parts = [arg for arg in parts if arg is not str]  # a registered name beyond the enum's
        return " or ".join(type_words(part) for part in parts)
    if origin is Literal:
        return " or ".join(json.dumps(value) for value in get_args(annotation))
    if origin is list:
        (item,) = get_args(annotation)
        return f"list of {type_words(item)}s"
    if origin is dict:
        return "mapping of strings"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in annotation)
    names = {str: "string", int: "whole number", bool: "true/false"}
    if annotation in names:
        return names[annotation]
    if get_args(annotation):  # Annotated[X, ...]
        return type_words(get_args(annotation)[0])
    return getattr(annotation, "__name__", str(annotation))


def bounds(info: FieldInfo) -> str:
    unit = " entries" if get_origin(info.annotation) is list else " characters"
    found = []
    for item in info.metadata:
        if isinstance(item, Ge):
            found.append(f"≥ {item.ge}")
        elif isinstance(item, Le):
            found.append(f"≤ {item.le}")
        elif isinstance(item, MaxLen):
            found.append(f"at most {item.max_length}{unit}")
    return f" ({', '.join(found)})" if found else ""


def default_words(info: FieldInfo) -> str:
    if info.default is PydanticUndefined:
        return "required"
    value = info.default.value if isinstance(info.default, Enum) else info.default
    return "none" if value is None else f"`{json.dumps(value)}`"


def key_rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    """One row per key of `model`; a nested model (`ci:`) gives one row per key inside it,
    named with its dotted path (`ci.wait`)."""
    rows = []
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            rows += key_rows(info.annotation, f"{key}.")
            continue
        meaning = " ".join((info.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{key}` | {type_words(info.annotation)}{bounds(info)} | "
                    f"{default_words(info)} | {meaning} |")
    return rows


def key_table(model: type[BaseModel]) -> str:
    """The markdown table of `model`'s keys, in the order the model declares them."""
    return "\n".join((HEADER, *key_rows(model)))


def spec_table() -> str:
    """The spec's keys; the `recipe` row names every registered recipe (jobs/recipes/)."""
    names = ", ".join(f"`{name}`" for name in registered())
    recipe_row = (f"| `recipe` | one of {names} | {default_words(TaskSpec.model_fields['recipe'])} | "
                  f"How batches are edited: {recipes_in_words()}. |")
    rows = [recipe_row if row.startswith("| `recipe` |") else row for row in key_rows(TaskSpec)]
    # A recipe's own keys (its `options` model) are spec keys too.
    rows += [row for rules in registered().values() if rules.options
             for row in key_rows(rules.options)]
    return "\n".join((HEADER, *rows))


def config_table() -> str:
    return key_table(RepoConfig)
