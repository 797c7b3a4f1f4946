"""Sandboxed code cannot make namespaces of its own (user, network, mount, pid), mount
anything or hold a capability: the kernel surface those open stays shut (docs/security.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.security import hostile

pytestmark = hostile.needs_bwrap

ATTEMPTS = {
    "user": "libc.unshare(0x10000000)",
    "network": "libc.unshare(0x40000000)",
    "mount": "libc.unshare(0x00020000)",
    "pid": "libc.unshare(0x20000000)",
    "user+network": "libc.unshare(0x10000000 | 0x40000000)",
    "tmpfs mount": "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)",
}
PROBE = ("import ctypes, os\n"
         "libc = ctypes.CDLL(None, use_errno=True)\n"
         "result = {attempt}\n"
         "print('result', result, os.strerror(ctypes.get_errno()))\n"
         "caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')]\n"
         "print(caps[0].strip())\n")


@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_no_namespace_or_mount_can_be_made_inside_the_sandbox(tmp_path: Path,
                                                               attempt: str) -> None:
    policy = SandboxPolicy(allow_commands=("python3",), timeout=30)
    result = BubblewrapSandbox().run(["python3", "-c", PROBE.format(attempt=ATTEMPTS[attempt])],
                                     cwd=tmp_path, policy=policy)
    assert result.exit_code == 0, result.output_tail
    assert "result -1" in result.output_tail, f"{attempt} succeeded: {result.output_tail}"
    assert "CapEff:\t0000000000000000" in result.output_tail


def test_the_unshare_program_cannot_make_a_user_namespace(tmp_path: Path) -> None:
    argv = ["python3", "-c", "import subprocess, sys\n"
            "done = subprocess.run(['unshare', '-U', '-r', 'true'], capture_output=True)\n"
            "print('unshare exit', done.returncode, done.stderr.decode().strip())"]
    result = BubblewrapSandbox().run(argv, cwd=tmp_path,
                                     policy=SandboxPolicy(allow_commands=("python3",),
                                                          timeout=30))
    assert "unshare exit 0" not in result.output_tail and "unshare exit" in result.output_tail
