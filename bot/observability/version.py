"""The running version, read from the installed package's metadata: pyproject.toml's
`version` is its single source (logged at start, shown by `/healthz` and `stepwise --version`)."""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "stepwise-bot"
UNKNOWN = "unknown"  # run from a source tree that was never installed


@lru_cache(maxsize=1)
def running_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return UNKNOWN
