"""The programs Stepwise itself runs outside the sandbox (git, bwrap, unshare, mount), found
only on the absolute entries of the worker's own PATH.

Stepwise starts these in a job's worktree or beside it, as the worker, with the host's files
writable. A relative PATH entry (an empty one, `.`, `bin`) is looked up from the process's
working directory, which is then the repository's own files: a planted `bin/git` or `./bwrap`
would run on the host. Commands run inside the sandbox are found elsewhere
(jobs/adapters/sandbox_reach.py); this module is only for Stepwise's own programs.
"""

from __future__ import annotations

import os
import shutil


def host_path() -> str:
    """The worker's PATH (or the default) without its relative entries."""
    return os.pathsep.join(entry for entry in (os.environ.get("PATH") or os.defpath).split(
        os.pathsep) if os.path.isabs(entry))


def host_program(name: str) -> str | None:
    """`name` by its absolute path on the absolute entries of the worker's PATH, or None."""
    found = shutil.which(name, path=host_path())
    return os.path.abspath(found) if found is not None else None
