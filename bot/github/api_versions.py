"""The GitHub REST API versions Stepwise speaks, apart from the client so the settings (read by
every CLI command, local ones included) do not import githubkit to learn them."""

from __future__ import annotations

from typing import Literal, get_args

# REST API versions whose githubkit schema packages are pinned (GHES documents only 2022-11-28).
ApiVersion = Literal["2022-11-28", "2026-03-10"]
API_VERSIONS: tuple[str, ...] = get_args(ApiVersion)
DEFAULT_API_VERSION: ApiVersion = "2022-11-28"
