"""The worktree walk for planted `.git` entries reads only the directories that changed."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from jobs.adapters import dir_scan


def tree(root: Path, dirs: int = 20) -> None:
    for number in range(dirs):
        where = root / f"d{number:02d}" / "inner"
        where.mkdir(parents=True)
        (where / "f.py").write_text("x = 1\n")
        (where.parent / "g.py").write_text("y = 2\n")


def settled(result: dir_scan.Scan) -> dir_scan.Scan:
    """The same record as if the walk had happened two seconds later (nothing racy)."""
    return dataclasses.replace(result, started_ns=result.started_ns + 2 * dir_scan.RACY_NS)


def test_an_unchanged_tree_is_not_read_again(tmp_path: Path) -> None:
    tree(tmp_path)
    first = dir_scan.scan(tmp_path)
    assert first.read == 41 and not first.found and not first.empty
    again = dir_scan.scan(tmp_path, settled(first))
    assert again.read == 0
    assert again.dirs == first.dirs


def test_a_racy_record_is_read_again(tmp_path: Path) -> None:
    tree(tmp_path)
    first = dir_scan.scan(tmp_path)
    assert dir_scan.scan(tmp_path, first).read == 41  # changed within the walk's second


def test_what_is_planted_after_the_record_is_found(tmp_path: Path) -> None:
    tree(tmp_path)
    record = settled(dir_scan.scan(tmp_path))
    (tmp_path / "d03/inner/.git").mkdir()
    (tmp_path / "d07/.GIT").write_text("gitdir: /x\n")
    os.mkfifo(tmp_path / "d09/inner/pipe")
    (tmp_path / "d11/new/deeper").mkdir(parents=True)  # a new subtree is read whole
    (tmp_path / "d11/new/deeper/.git").write_text("gitdir: /y\n")
    (tmp_path / "d12/empty").mkdir()
    found = dir_scan.scan(tmp_path, record)
    assert sorted(str(p.relative_to(tmp_path)) for p in found.found) == [
        "d03/inner/.git", "d07/.GIT", "d09/inner/pipe", "d11/new/deeper/.git"]
    assert [str(p.relative_to(tmp_path)) for p in found.empty] == ["d12/empty"]
    assert found.read == 8  # the five changed directories, the two new ones and d12/empty


def test_a_directory_swapped_for_another_is_read(tmp_path: Path) -> None:
    tree(tmp_path)
    record = settled(dir_scan.scan(tmp_path))
    (tmp_path / "d01/inner").rename(tmp_path / "d01/was")
    (tmp_path / "d02/inner").rename(tmp_path / "d01/inner")  # same name, another inode
    (tmp_path / "d01/inner/.git").mkdir()
    found = dir_scan.scan(tmp_path, record)
    assert [str(p.relative_to(tmp_path)) for p in found.found] == ["d01/inner/.git"]


def test_the_record_round_trips_and_a_finding_is_never_kept(tmp_path: Path) -> None:
    tree(tmp_path / "wt")
    private = tmp_path / "private"
    private.mkdir()
    result = dir_scan.scan(tmp_path / "wt")
    dir_scan.save(private, result)
    loaded = dir_scan.load(private)
    assert loaded is not None and loaded.dirs == result.dirs
    (tmp_path / "wt/d00/.git").mkdir()
    dir_scan.save(private, dir_scan.scan(tmp_path / "wt"))
    assert dir_scan.load(private) is None
    (private / dir_scan.RECORD_NAME).write_text("{not json")
    assert dir_scan.load(private) is None
