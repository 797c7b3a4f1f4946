"""Shared helpers of the sandbox tests (no tests here): the allowlist they run under, the
bubblewrap check, running a python snippet in a sandbox, npm's layout of a tool, and watching
processes in /proc."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters.sandbox import CommandResult, Sandbox, SandboxPolicy

PY = ("python", "python3")
IN_CI = os.environ.get("CI") == "true"
BWRAP_OK = sb.bubblewrap_available()
if IN_CI and not BWRAP_OK:
    raise RuntimeError("bubblewrap must be installed and usable in CI (apt-get install bubblewrap)")
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap (bwrap) is not usable here")
# Validation's writes kept apart (jobs/adapters/scratch.py): an overlay in a user namespace.
OVERLAY_OK = BWRAP_OK and not sb._overlay_refusal(sb.BubblewrapSandbox().bwrap)
if IN_CI and not OVERLAY_OK:
    raise RuntimeError("an overlay in a user namespace must work in CI (Linux 5.11+, util-linux)")
needs_overlay = pytest.mark.skipif(not OVERLAY_OK, reason="no overlay in a user namespace here")


# The start of a hostile snippet: `attempt(name, action)` prints "<name> done" or
# "<name> refused <errno>", so a failing test says which write got through.
ATTEMPT = """
import os, sys
def attempt(name, action):
    try:
        action()
        print(name, "done")
    except OSError as exc:
        print(name, "refused", exc.errno)
"""


def py(code: str, *args: str) -> list[str]:
    return ["python3", "-c", code, *args]


def run(box: Sandbox, argv: list[str], cwd: Path, **kwargs: object) -> CommandResult:
    writable = kwargs.pop("writable", ())
    policy = SandboxPolicy(allow_commands=kwargs.pop("allow", PY), **kwargs)  # type: ignore[arg-type]
    return box.run(argv, cwd=cwd, policy=policy, writable=writable)  # type: ignore[arg-type]


def node_tools(root: Path, tool: str = "tape", text: str = "dependency read") -> Path:
    """npm's layout under `root`: `node_modules/.bin/<tool>` links to its package's script,
    which prints a file of another package (`text`); returns the `.bin` folder."""
    modules = root / "node_modules"
    (modules / tool / "bin").mkdir(parents=True)
    (modules / "dep").mkdir()
    (modules / "dep" / "index.txt").write_text(text + "\n")
    script = modules / tool / "bin" / tool
    script.write_text('#!/bin/sh\nhere=$(dirname "$(readlink -f "$0")")\n'
                      'cat "$here/../../dep/index.txt"\n')
    script.chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / tool).symlink_to(f"../{tool}/bin/{tool}")
    return modules / ".bin"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its (re)parent to reap it is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def procs_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until(predicate: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False
