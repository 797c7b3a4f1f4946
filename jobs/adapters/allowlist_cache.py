"""The default egress allowlist of a commit, the part its files decide computed once and kept
beside the repository.

Without `network_allow`, a job with the network on may reach the registries of the ecosystems
its base commit uses and the package indexes configured in the repository or where Stepwise runs
(jobs/adapters/egress_defaults.py). What the commit's files decide takes a listing of every
tracked file and a read of the few that may name an index; a commit never changes, so that part
is kept in the repository's state directory (out of every sandbox's reach) under the commit and
a digest of the tables that decide it: every later step of every job on that base reads one
small file instead. The config's `env` and the operator's settings are read each time (they are
not the commit's).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from jobs.adapters.egress_defaults import (
    ECOSYSTEMS,
    INDEX_VARIABLES,
    REPOSITORY_INDEX_FILES,
    ecosystem_hosts,
    operator_indexes,
    repository_index_files,
    repository_indexes,
)
from jobs.kernel.records import NetworkHost

_VERSION = 2  # of what is kept: hosts with their reasons
_TABLES = hashlib.sha256(json.dumps(
    [_VERSION, [(e.why, e.markers, e.hosts) for e in ECOSYSTEMS], REPOSITORY_INDEX_FILES,
     INDEX_VARIABLES], sort_keys=True, default=list).encode()).hexdigest()[:12]


class _Listing(Protocol):
    @property
    def state_dir(self) -> Path: ...

    def tracked_files(self, sha: str) -> list[str]: ...

    def read_texts(self, sha: str, paths: list[str]) -> Mapping[str, str | None]: ...


def allowlist_path(repository: _Listing, sha: str) -> Path:
    return repository.state_dir / "allowlists" / f"{sha}-{_TABLES}.json"


def cached_commit_hosts(repository: _Listing, sha: str) -> list[NetworkHost]:
    """The hosts the files at `sha` admit (ecosystems, then the indexes they configure), listed
    at most once per commit."""
    path = allowlist_path(repository, sha)
    try:
        return [NetworkHost.model_validate(item)
                for item in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):
        pass  # not computed yet (or unreadable): compute it again
    tracked = repository.tracked_files(sha)
    index_files = repository_index_files(tracked)
    texts = repository.read_texts(sha, index_files) if index_files else {}
    hosts = [*ecosystem_hosts(tracked), *repository_indexes(texts, {})]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps([host.model_dump() for host in hosts]), encoding="utf-8")
    partial.replace(path)  # whole or absent, whoever writes it first
    return hosts


def default_network_hosts(repository: _Listing, sha: str, *, env: Mapping[str, str],
                          environ: Mapping[str, str] = os.environ,
                          home: Path | None = None) -> list[NetworkHost]:
    """The whole default of a job on `sha` whose config sets `env`: the commit's hosts, the
    indexes `env` names, then the operator's; each host once, with its first reason."""
    seen: dict[str, NetworkHost] = {}
    for host in [*cached_commit_hosts(repository, sha), *repository_indexes({}, env),
                 *operator_indexes(environ, home=home)]:
        seen.setdefault(host.host, host)
    return list(seen.values())


def admitted(hosts: list[NetworkHost]) -> list[str]:
    """The allowlist entries of `hosts` (those not left out)."""
    return [host.host for host in hosts if not host.left_out]
