"""The default egress allowlist of a commit, computed once and kept beside the repository.

Without `network_allow`, a job with the network on may reach the registries of the ecosystems
its base commit uses (jobs/adapters/egress.py, `default_allowlist`), which takes a listing of
every tracked file. A commit never changes, so the answer is kept in the repository's state
directory (out of every sandbox's reach) under the commit and a digest of the tables that
decide it: every later step of every job on that base reads one small file instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Protocol

from jobs.adapters.egress import ECOSYSTEM_HOSTS, ECOSYSTEM_MARKERS, default_allowlist

_TABLES = hashlib.sha256(json.dumps([ECOSYSTEM_MARKERS, ECOSYSTEM_HOSTS], sort_keys=True,
                                    default=list).encode()).hexdigest()[:12]


class _Listing(Protocol):
    @property
    def state_dir(self) -> Path: ...

    def tracked_files(self, sha: str) -> list[str]: ...


def allowlist_path(repository: _Listing, sha: str) -> Path:
    return repository.state_dir / "allowlists" / f"{sha}-{_TABLES}.json"


def cached_default_allowlist(repository: _Listing, sha: str) -> tuple[str, ...]:
    """`default_allowlist` of the files tracked at `sha`, listed at most once per commit."""
    path = allowlist_path(repository, sha)
    try:
        hosts = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(hosts, list) and all(isinstance(host, str) for host in hosts):
            return tuple(hosts)
    except (OSError, ValueError):
        pass  # not computed yet (or unreadable): compute it again
    hosts = list(default_allowlist(repository.tracked_files(sha)))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(hosts), encoding="utf-8")
    partial.replace(path)  # whole or absent, whoever writes it first
    return tuple(hosts)
