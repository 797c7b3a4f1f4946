"""Generated repositories of many tracked files, for the benchmarks that grow with the repository.

`make_repository(path, files)` writes `files` small Python modules (100 per directory) plus
`extra` files given by the caller in one `git fast-import` stream: 100,000 files take a few
seconds and nothing is committed to this project.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

PER_DIRECTORY = 100


def module_path(number: int) -> str:
    return f"pkg/d{number // PER_DIRECTORY:04d}/m{number % PER_DIRECTORY:03d}.py"


def module_text(number: int) -> bytes:
    return f'"""Module {number}."""\n\nVALUE = {number}\n'.encode()


def make_repository(path: Path, files: int, extra: Mapping[str, str | bytes] | None = None,
                    *, branch: str = "main") -> str:
    """A non-bare repository at `path` whose one commit tracks `files` modules and `extra`;
    returns the commit's sha."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", "--initial-branch", branch, str(path)], check=True)
    chunks: list[bytes] = [
        f"commit refs/heads/{branch}\nmark :1\n"
        "committer Bench <bench@example.com> 1700000000 +0000\n".encode(),
        b"data 9\ngenerate\n",
    ]
    entries: dict[str, bytes] = {module_path(n): module_text(n) for n in range(files)}
    for name, content in (extra or {}).items():
        entries[name] = content.encode() if isinstance(content, str) else content
    for name, data in entries.items():
        chunks.append(f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n")
    chunks.append(b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(chunks),
                   check=True)
    done = subprocess.run(["git", "-C", str(path), "rev-parse", branch], check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


def grow_branch(git_dir: Path, branch: str, files: int) -> str:
    """Add `files` modules (under `pkg/`) to `branch` of the repository at `git_dir` (bare or
    not) in one new commit on top of its head; returns the new head."""
    if files <= 0:
        return subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", branch],
                              check=True, capture_output=True, text=True).stdout.strip()
    chunks: list[bytes] = [
        f"commit refs/heads/{branch}\n"
        "committer Bench <bench@example.com> 1700000000 +0000\n"
        f"data 9\ngenerate\nfrom refs/heads/{branch}^0\n".encode(),
    ]
    for number in range(files):
        data = module_text(number)
        chunks.append(f"M 100644 inline {module_path(number)}\ndata {len(data)}\n".encode()
                      + data + b"\n")
    chunks.append(b"\n")
    subprocess.run(["git", "--git-dir", str(git_dir), "fast-import", "--quiet", "--force"],
                   input=b"".join(chunks), check=True)
    return subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", branch], check=True,
                          capture_output=True, text=True).stdout.strip()
