"""The environment cache on a real file system: keys, builds, reuse, capture and LRU eviction."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jobs.adapters.environments import (
    EnvironmentCache,
    capture_outputs,
    environment_key,
)
from jobs.adapters.toolchain import toolchain_identity

BASE = {"setup": ["python -m venv .venv"], "env": {"A": "1"}, "network": "setup",
        "cache_files": {"requirements.txt": "blob1"}, "toolchain": "x86_64;python 3.11.7"}


def key(**changes: object) -> str:
    return environment_key(**{**BASE, **changes})  # type: ignore[arg-type]


def test_the_key_changes_with_every_input_and_nothing_else() -> None:
    assert key() == key()
    others = {key(setup=["python -m venv venv"]), key(env={"A": "2"}), key(network="true"),
              key(cache_files={"requirements.txt": "blob2"}), key(toolchain="python 3.12"),
              key(cache_files={})}
    assert key() not in others and len(others) == 6
    assert key(env={"B": "2", "A": "1"}) == key(env={"A": "1", "B": "2"})


def test_toolchain_identity_names_the_interpreters() -> None:
    assert "python3=" in toolchain_identity()


def build(cache: EnvironmentCache, name: str, payload: int) -> None:
    with cache.building(name) as staging:
        (staging / "tree" / ".venv").mkdir()
        (staging / "tree" / ".venv" / "blob").write_bytes(b"x" * payload)
        cache.commit(name, staging, entries=[".venv"], setup_evidence=[{"exit_code": 0}])


def test_a_build_is_found_again_and_marked_used(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path, limit_bytes=10**9)
    assert cache.get("k1") is None
    build(cache, "k1", 10)
    env = cache.get("k1")
    assert env is not None and env.from_cache and env.entries == (".venv",)
    assert (env.tree / ".venv" / "blob").read_bytes() == b"x" * 10
    assert env.setup_evidence == ({"exit_code": 0},)
    assert env.program_dirs() == []
    (env.tree / ".venv" / "bin").mkdir()
    assert env.program_dirs() == [".venv/bin"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".build")] == []


def test_a_build_that_fails_leaves_nothing(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path, limit_bytes=10**9)
    with pytest.raises(RuntimeError), cache.building("k1") as staging:
        (staging / "tree" / "half").write_text("made")
        raise RuntimeError("setup was killed")
    assert cache.get("k1") is None
    assert not any(p.name.startswith(".build") for p in tmp_path.iterdir())


def test_a_damaged_manifest_is_no_environment(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path, limit_bytes=10**9)
    build(cache, "k1", 10)
    (tmp_path / "k1" / "manifest.json").write_text("{not json")
    assert cache.get("k1") is None


def test_least_recently_used_are_evicted_past_the_limit(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path, limit_bytes=300_000)
    build(cache, "old", 100_000)
    build(cache, "mid", 100_000)
    assert cache.get("old") is not None  # now the most recently used
    build(cache, "new", 100_000)  # over the limit: "mid" is the least recently used
    assert cache.get("mid") is None
    assert cache.get("old") is not None and cache.get("new") is not None


def test_the_environment_just_built_is_kept_even_alone_over_the_limit(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path, limit_bytes=1)
    build(cache, "big", 50_000)
    assert cache.get("big") is not None


def test_capture_moves_what_setup_made_and_nothing_else(tmp_path: Path) -> None:
    worktree, tree = tmp_path / "wt", tmp_path / "tree"
    (worktree / ".venv" / "bin").mkdir(parents=True)
    (worktree / "src" / "pkg.egg-info").mkdir(parents=True)
    (worktree / "src" / "pkg.egg-info" / "PKG-INFO").write_text("x")
    (worktree / "tracked.py").write_text("kept")
    (worktree / ".git").write_text("gitdir: /elsewhere")
    os.symlink("/etc/passwd", worktree / "link")
    entries = capture_outputs(worktree, [".venv/", "src/pkg.egg-info/", "link", ".git",
                                         "missing/"], tree)
    assert entries == [".venv", "link", "src/pkg.egg-info"]
    assert (tree / ".venv" / "bin").is_dir() and not (worktree / ".venv").exists()
    assert (tree / "link").is_symlink() and os.readlink(tree / "link") == "/etc/passwd"
    assert (worktree / "tracked.py").exists() and (worktree / ".git").exists()
