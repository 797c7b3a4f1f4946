"""Objects written by Stepwise itself are the objects git would write: same ids, readable, sound."""

from __future__ import annotations

import subprocess
from pathlib import Path

from jobs.adapters.object_writer import write_blobs
from tests.conftest import RepoFactory
from tests.kit.repos import git

CONTENTS = [b"", b"hello\n", b"\0binary\xff", "naïve\r\n".encode(), b"x" * 100_000]


def test_written_blobs_have_gits_ids_and_pass_fsck(repo_factory: RepoFactory) -> None:
    path = repo_factory({"README.md": "# demo\n"})
    objects = path / ".git" / "objects"
    oids = write_blobs(objects, CONTENTS, sha1=True)
    assert oids is not None
    for data, oid in zip(CONTENTS, oids, strict=True):
        expected = subprocess.run(["git", "hash-object", "--stdin", "--no-filters"], input=data,
                                  capture_output=True, check=True).stdout.decode().strip()
        assert oid == expected
        shown = subprocess.run(["git", "-C", str(path), "cat-file", "blob", oid],
                               capture_output=True, check=True).stdout
        assert shown == data
        assert (objects / oid[:2] / oid[2:]).stat().st_mode & 0o777 == 0o444
    git(path, "fsck", "--strict", "--no-dangling")
    assert write_blobs(objects, CONTENTS[:2], sha1=True) == oids[:2]  # already there: kept
    assert not list(objects.glob("*/tmp_obj_*"))


def test_no_sha1_or_a_linked_objects_directory_leaves_it_to_git(
        repo_factory: RepoFactory, tmp_path: Path) -> None:
    path = repo_factory({"README.md": "# demo\n"})
    assert write_blobs(path / ".git" / "objects", [b"x"], sha1=False) is None
    link = tmp_path / "objects-link"
    link.symlink_to(path / ".git" / "objects")
    assert write_blobs(link, [b"x"], sha1=True) is None
