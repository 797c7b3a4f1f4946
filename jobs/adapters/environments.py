"""Job environments: what `setup` builds, kept outside every worktree and cached under a key.

An environment is one directory, `<root>/<key>/`:
    tree/          what setup left in the repository tree that git does not track (`.venv`,
                   `node_modules`, generated files), at the same repository-relative paths
    manifest.json  the key, the entries of tree/, setup's evidence, the size, created and used,
                   and the key's inputs (so a rebuild can say what changed)
    caches/        the tools' caches (pip, npm, pytest, ruff, mypy, ...): the one writable part,
                   bound at sandbox_view.CACHE_MOUNT for every command of every job with this
                   key; emptied when it outgrows a quarter of the cache limit
Later commands see it read-only at the same places (the sandbox binds each entry over the
worktree), so no batch can change what the next job will reuse and nothing of it is ever part
of a diff. Setup's HOME is a throwaway: what it writes outside the repository tree is not kept.
A build happens in `<root>/.build-<key>-<pid>` and is renamed into place: a killed
build leaves nothing half-made. The key covers the setup commands, their environment and
network mode, the content of the `cache_key` files and the toolchain (toolchain.py: the programs
setup runs, never PATH itself), so a change rebuilds; the manifest keeps these inputs, so the
rebuild can say which one changed.
The least recently used environments are evicted past the size limit.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jobs.adapters import tree_fd
from jobs.inputs.sandboxing import EnvironmentLayer

MANIFEST = "manifest.json"
CACHES = "caches"
DEFAULT_CACHE_MB = 4096
CACHE_SIZE_VARIABLE = "STEPWISE_ENV_CACHE_MB"
# Where programs are looked for first, inside the repository tree (then the image's PATH).
PROGRAM_DIRS = (".venv/bin", "venv/bin", "node_modules/.bin")


@dataclass(frozen=True)
class Environment:
    """A built environment: where it is, what it holds, and whether this job reused it."""

    key: str
    path: Path
    entries: tuple[str, ...]
    size_bytes: int
    from_cache: bool
    setup_evidence: tuple[dict[str, object], ...] = ()

    @property
    def tree(self) -> Path:
        return self.path / "tree"

    @property
    def caches(self) -> Path:
        """The tools' writable caches (pip, npm, pytest, ruff, ...), bound at
        sandbox_view.CACHE_MOUNT; kept with the environment and evicted with it."""
        return self.path / CACHES

    def program_dirs(self) -> list[str]:
        """Repository-relative directories of programs the environment provides, in order."""
        return [rel for rel in PROGRAM_DIRS if (self.tree / rel).is_dir()]


def cache_limit_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The cache's size limit from STEPWISE_ENV_CACHE_MB (default 4096 MB)."""
    text = environ.get(CACHE_SIZE_VARIABLE, "").strip()
    if not text:
        return DEFAULT_CACHE_MB * 2**20
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{CACHE_SIZE_VARIABLE}={text!r} is not a whole number of megabytes")
    return int(text) * 2**20


def key_inputs(*, setup: Sequence[str], env: Mapping[str, str], network: str,
               cache_files: Mapping[str, str], toolchain: str) -> dict[str, object]:
    """What the cache key is made of: setup's commands, environment and network, the
    `cache_key` files' content (path -> blob id or digest) and the toolchain (toolchain.py)."""
    return {"setup": list(setup), "env": dict(sorted(env.items())), "network": network,
            "files": dict(sorted(cache_files.items())), "toolchain": toolchain}


def digest_inputs(inputs: Mapping[str, object]) -> str:
    encoded = json.dumps(inputs, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:32]


def environment_key(*, setup: Sequence[str], env: Mapping[str, str], network: str,
                    cache_files: Mapping[str, str], toolchain: str) -> str:
    """The cache key: the digest of `key_inputs`."""
    return digest_inputs(key_inputs(setup=setup, env=env, network=network,
                                    cache_files=cache_files, toolchain=toolchain))


def tree_size(path: Path) -> int:
    total = 0
    for root, dirs, files in os.walk(path):
        for name in files + dirs:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


class EnvironmentCache:
    """The environments of one repository (or one local checkout) under `root`."""

    def __init__(self, root: Path, *, limit_bytes: int) -> None:
        self.root = root
        self.limit_bytes = limit_bytes

    def get(self, key: str) -> Environment | None:
        """The environment built for `key`, marked as just used; None if there is none."""
        path = self.root / key
        try:
            manifest = json.loads((path / MANIFEST).read_text())
        except (OSError, ValueError):
            return None
        if manifest.get("key") != key:
            return None
        manifest["used"] = time.time()
        _write_json(path / MANIFEST, manifest)
        return Environment(key, path, tuple(manifest["entries"]), int(manifest["size"]),
                           from_cache=True,
                           setup_evidence=tuple(manifest.get("setup_evidence", ())))

    @contextlib.contextmanager
    def building(self, key: str) -> Iterator[Path]:
        """Holds the key's build lock and yields a fresh build directory (with `tree/`).

        Leaving the block without `commit` discards the build."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".lock-{key}", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            staging = self.root / f".build-{key}-{os.getpid()}"
            tree_fd.discard(staging)
            (staging / "tree").mkdir(parents=True)
            try:
                yield staging
            finally:
                tree_fd.discard(staging)

    def commit(self, key: str, staging: Path, *, entries: Sequence[str],
               setup_evidence: Sequence[dict[str, object]],
               inputs: Mapping[str, object] | None = None) -> Environment:
        """Moves a finished build into place (inside `building`) and evicts old ones; `inputs`
        (what the key was made of) lets a later rebuild say what changed."""
        size = tree_size(staging)
        now = time.time()
        _write_json(staging / MANIFEST, {
            "key": key, "entries": list(entries), "size": size, "created": now, "used": now,
            "setup_evidence": list(setup_evidence), "inputs": dict(inputs or {})})
        final = self.root / key
        if final.exists():
            tree_fd.remove(self.root, key)
        staging.rename(final)
        self.failure_path(key).unlink(missing_ok=True)
        self.evict(keep=key)
        return Environment(key, final, tuple(entries), size, from_cache=False,
                           setup_evidence=tuple(setup_evidence))

    def failure_path(self, key: str) -> Path:
        return self.root / f".failed-{key}.json"

    def record_failure(self, key: str, *, what: str, job: str) -> None:
        """Setup failed to build `key` (nothing was kept): what failed, for the next job's plan.
        A later build of the key that succeeds removes it."""
        self.root.mkdir(parents=True, exist_ok=True)
        _write_json(self.failure_path(key), {"key": key, "what": what, "job": job,
                                             "when": time.time()})

    def last_failure(self, key: str) -> str:
        """What failed when `key` was last built and failed ("" when it was not, or it was
        built since): `issue-3: setup could not reach ...`."""
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            failed = json.loads(self.failure_path(key).read_text())
            if failed["key"] == key:
                return f"{failed['job']}: {failed['what']}"
        return ""

    def ready_caches(self, environment: EnvironmentLayer) -> Path:
        """The environment's tool cache directory, made if missing, emptied when it holds more
        than a quarter of the cache limit (a tool cache is only ever a speed-up)."""
        caches = environment.caches
        if caches.is_symlink():
            caches.unlink()
        if caches.is_dir() and tree_size(caches) > self.limit_bytes // 4:
            tree_fd.discard(caches)
        caches.mkdir(exist_ok=True)
        return caches

    def latest_inputs(self) -> dict[str, object] | None:
        """The key inputs of the environment built last (the one a rebuild replaces)."""
        latest: tuple[float, dict[str, object]] | None = None
        for manifest_path in self.root.glob(f"*/{MANIFEST}") if self.root.is_dir() else []:
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                manifest = json.loads(manifest_path.read_text())
                if manifest.get("inputs") and (latest is None
                                               or float(manifest["created"]) > latest[0]):
                    latest = (float(manifest["created"]), dict(manifest["inputs"]))
        return latest[1] if latest else None

    def evict(self, *, keep: str | None = None) -> list[str]:
        """Removes the least recently used environments until the rest fit the limit."""
        found: list[tuple[float, int, str]] = []
        for manifest_path in self.root.glob(f"*/{MANIFEST}"):
            with contextlib.suppress(OSError, ValueError, KeyError):
                manifest = json.loads(manifest_path.read_text())
                found.append((float(manifest["used"]), int(manifest["size"]),
                              manifest_path.parent.name))
        total = sum(size for _, size, _ in found)
        evicted = []
        for _, size, key in sorted(found):
            if total <= self.limit_bytes:
                break
            if key == keep:
                continue
            tree_fd.discard(self.root / key)
            total -= size
            evicted.append(key)
        return evicted


def capture_outputs(worktree: Path, untracked: Sequence[str], tree: Path) -> list[str]:
    """Moves what setup created in the worktree (`untracked`: top-most new paths, as
    `git ls-files --others --directory` lists them) into the environment's tree."""
    entries = []
    for rel in sorted(untracked):
        rel = rel.rstrip("/")
        source = worktree / rel
        if not rel or rel.split("/")[0] == ".git" or not tree_fd.real_parents(worktree, rel) \
                or not os.path.lexists(source):  # never moved through a link setup planted
            continue
        target = tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(source), str(target))
        entries.append(rel)
    return entries


def _write_json(path: Path, document: dict[str, object]) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(document, indent=1))
    os.replace(partial, path)
