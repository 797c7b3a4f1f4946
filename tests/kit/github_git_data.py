"""Git plumbing behind the fake GitHub's Git Data API: blobs, trees on a base tree, commits GitHub
signs (a `gpgsig` header, so their sha differs from the same commit made locally, as on GitHub),
fast-forward checks and the `workflows` permission rule shared by pushes and ref updates."""

from __future__ import annotations

import base64
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.kit.github_git import GitError, git, git_text

WORKFLOWS_DIR = ".github/workflows"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FAKE_SIGNATURE = ("-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJmZmFrZQkQ4AAAAAAAAAAAAAA"
                  "\n=fake\n-----END PGP SIGNATURE-----")
GITHUB_COMMITTER = ("GitHub", "noreply@github.com")


def workflow_refusal(path: str) -> str:
    """GitHub's words when an App without `workflows: write` changes a workflow file."""
    return (f"refusing to allow a GitHub App to create or update workflow `{path}` without "
            "`workflows` permission")


def touches_workflows(path: str) -> bool:
    """Whether a tree entry at `path` is, holds or replaces a workflow file."""
    path = path.strip("/")
    return path in (".github", WORKFLOWS_DIR) or path.startswith(WORKFLOWS_DIR + "/")


def object_kind(repo: Path, sha: str) -> str | None:
    try:
        return git_text(repo, "cat-file", "-t", sha)
    except GitError:
        return None


def write_blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input_bytes=data).decode().strip()


def decode_content(content: str, encoding: str) -> bytes:
    if encoding == "base64":
        return base64.b64decode("".join(content.split()), validate=True)
    if encoding in ("utf-8", "utf8"):
        return content.encode()
    raise ValueError(f"encoding {encoding!r} is not utf-8 or base64")


def build_tree(repo: Path, base_tree: str | None, entries: Sequence[dict[str, Any]]) -> str:
    """`base_tree` with `entries` ({path, mode, type, sha|content}; sha None deletes) applied."""
    lines: list[str] = []
    for entry in entries:
        path, mode = str(entry["path"]), str(entry["mode"])
        if "content" in entry and entry["content"] is not None:
            sha = write_blob(repo, str(entry["content"]).encode())
        else:
            sha = entry.get("sha")
        if sha is None:
            lines.append(f"0 {'0' * 40}\t{path}")
        elif mode == "040000":  # a whole directory: its files replace what was there
            lines.append(f"0 {'0' * 40}\t{path}")
            listing = git(repo, "ls-tree", "-r", "-z", str(sha)).decode()
            for item in filter(None, listing.split("\0")):
                meta, name = item.split("\t", 1)
                sub_mode, _kind, sub_sha = meta.split()
                lines.append(f"{sub_mode} {sub_sha}\t{path}/{name}")
        else:
            lines.append(f"{mode} {sha}\t{path}")
    with tempfile.TemporaryDirectory(prefix="fakegh-tree-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(repo, "read-tree", *([base_tree] if base_tree else ["--empty"]), env=env)
        git(repo, "update-index", "--index-info", env=env,
            input_bytes="".join(f"{line}\n" for line in lines).encode())
        return git(repo, "write-tree", env=env).decode().strip()


def _ident(person: tuple[str, str], when: datetime) -> str:
    offset = when.strftime("%z") or "+0000"
    return f"{person[0]} <{person[1]}> {int(when.timestamp())} {offset}"


def signed_commit(repo: Path, *, tree: str, parents: Sequence[str], message: str,
                  author: tuple[str, str], when: datetime, committed: datetime) -> str:
    """A commit object as GitHub writes one for the API: committer GitHub, signed."""
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents),
             f"author {_ident(author, when)}",
             f"committer {_ident(GITHUB_COMMITTER, committed)}",
             "gpgsig " + FAKE_SIGNATURE.replace("\n", "\n ")]
    text = "\n".join(lines) + "\n\n" + message
    return git(repo, "hash-object", "-t", "commit", "-w", "--stdin",
               input_bytes=text.encode()).decode().strip()


def unsigned_commit(repo: Path, *, tree: str, parents: Sequence[str], message: str,
                    author: tuple[str, str], when: datetime, committer: tuple[str, str],
                    committed: datetime, signature: str | None) -> str:
    """A commit object made through the API with a custom author, committer or signature:
    GitHub writes it as asked and does not sign it."""
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents),
             f"author {_ident(author, when)}", f"committer {_ident(committer, committed)}"]
    if signature:
        lines.append("gpgsig " + signature.strip().replace("\n", "\n "))
    text = "\n".join(lines) + "\n\n" + message
    return git(repo, "hash-object", "-t", "commit", "-w", "--stdin",
               input_bytes=text.encode()).decode().strip()


def commit_fields(repo: Path, sha: str) -> dict[str, Any]:
    """tree, parents, author/committer (name, email, epoch) and message of commit `sha`."""
    raw = git(repo, "cat-file", "commit", sha).decode(errors="replace")
    header, _, message = raw.partition("\n\n")
    fields: dict[str, Any] = {"parents": [], "message": message}
    for line in header.splitlines():
        key, _, value = line.partition(" ")
        if key == "tree":
            fields["tree"] = value
        elif key == "parent":
            fields["parents"].append(value)
        elif key == "gpgsig":
            fields["gpgsig"] = value
        elif key in ("author", "committer"):
            name, _, rest = value.partition(" <")
            email, _, stamp = rest.partition("> ")
            fields[key] = (name, email, int(stamp.split()[0]))
    return fields


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    try:
        git(repo, "merge-base", "--is-ancestor", ancestor, descendant)
    except GitError:
        return False
    return True


def changed_workflow(repo: Path, old: str | None, new: str) -> str | None:
    """The first file under .github/workflows that `new` creates or changes compared with `old`
    (None: compared with nothing), or None."""
    out = git(repo, "diff-tree", "-r", "--name-only", "-z", "--no-renames", old or EMPTY_TREE,
              new, "--", WORKFLOWS_DIR).decode()
    return next((p for p in out.split("\0") if p), None)
