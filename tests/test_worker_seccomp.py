"""The worker's seccomp profile does what it is for, on this kernel with the real bubblewrap: no
container engine runs here, so tests/kit/docker_seccomp.py builds each profile's filter as
Docker (runc) would for a container with Docker's default capabilities, loads it with
libseccomp and execs the command as a non-root user. Under Docker's default profile bubblewrap
cannot build its namespaces (why the worker used to run unconfined); under the worker's profile
it can, and what the default refuses besides (here `add_key`) is still refused."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SECCOMP = ROOT / "deploy" / "seccomp"
UNPRIVILEGED = 65534 if os.getuid() == 0 else os.getuid()  # the worker runs as a non-root user
# bubblewrap as the sandbox starts it: every namespace, no nested user namespace, no capability.
BWRAP = ["bwrap", "--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-net",
         "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--ro-bind", "/", "/",
         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--cap-drop", "ALL",
         "/bin/sh", "-c", "echo sandboxed as $(id -u) in pid $$"]
ADD_KEY = ("import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
           "key = libc.syscall(248, b'user', b'stepwise-probe', b'v', 1, -2); "
           "print('refused' if key < 0 and ctypes.get_errno() == 1 else 'allowed')")

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or ctypes.util.find_library("seccomp") is None
    or os.uname().machine != "x86_64",
    reason="needs bubblewrap, libseccomp and x86_64 (the add_key probe's syscall number)")


def under(profile: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.kit.docker_seccomp",
                           str(SECCOMP / profile), str(UNPRIVILEGED), "--", *command],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def test_bubblewrap_runs_under_the_workers_profile_and_not_under_dockers_default() -> None:
    refused = under("docker-default.json", *BWRAP)
    assert refused.returncode != 0 and "sandboxed" not in refused.stdout
    assert "namespace" in refused.stderr  # bwrap: "No permissions to create new namespace"
    ran = under("stepwise-worker.json", *BWRAP)
    assert ran.returncode == 0, ran.stderr
    # its own PID namespace: bubblewrap's init is pid 1 there, the command pid 2
    assert ran.stdout.strip() == f"sandboxed as {UNPRIVILEGED} in pid 2"


def test_the_workers_profile_still_refuses_what_dockers_default_refuses() -> None:
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    unfiltered = subprocess.run([python, "-c", ADD_KEY], capture_output=True, text=True,
                                timeout=30, check=False)
    assert unfiltered.stdout.strip() == "allowed"  # the kernel would let it through
    for profile in ("docker-default.json", "stepwise-worker.json"):
        probed = under(profile, python, "-c", ADD_KEY)
        assert probed.stdout.strip() == "refused", (profile, probed.stderr)
