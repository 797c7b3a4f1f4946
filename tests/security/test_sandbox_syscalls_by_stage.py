"""The syscall filter per stage, through a real local job in the real sandbox: the repository's
setup (with `network: setup`), its codemod and its validation each run a probe that tries every
denied call; the table below says what each stage must get back, and the record's evidence shows
what each really got. A control run without the filter shows the probes would get through."""

from __future__ import annotations

import errno
import json
import platform
from pathlib import Path

import pytest
import yaml

from jobs.adapters import sandbox_hardening as seccomp
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from jobs.features.environments.record import environment_of
from jobs.inputs.spec import parse_issue_file
from jobs.kernel.model import JobStatus
from tests.kit.local_e2e import session
from tests.kit.repos import make_repo
from tests.security import hostile

pytestmark = [hostile.needs_bwrap,
              pytest.mark.skipif(platform.machine() != "x86_64",
                                 reason="the syscall numbers below are x86_64's")]

# Each attempt: Python source evaluated by the probe, giving 0 (it worked) or the errno it got.
ATTEMPTS = {
    "io_uring_setup": "sys(425, 1, 0)",
    "io_uring_enter": "sys(426, -1, 0, 0, 0, 0, 0)",
    "io_uring_register": "sys(427, -1, 0, 0, 0)",
    "pidfd_getfd": "sys(438, -1, 0, 0)",
    "process_vm_readv": "sys(310, os.getpid(), 0, 0, 0, 0, 0)",
    "process_vm_writev": "sys(311, os.getpid(), 0, 0, 0, 0, 0)",
    "ptrace": "sys(101, 0, 0, 0, 0)",
    "open /proc/1/mem": "opened('/proc/1/mem', 'r+b')",
    "open /proc/1/task/1/mem": "opened('/proc/1/task/1/mem', 'rb')",
    "read /proc/1/environ": "opened('/proc/1/environ', 'rb')",
    "socket AF_VSOCK": "sock(40, 1)",
    "socket AF_VSOCK, high bits": "sock(40 | 1 << 32, 1)",
    "socket AF_PACKET": "sock(17, 3)",
    "socket AF_ALG": "sock(38, 5)",
    "socket AF_BLUETOOTH": "sock(31, 1)",
    "socket AF_KEY": "sock(15, 3)",
    "socket AF_XDP": "sock(44, 3)",
    "socket family 63": "sock(63, 1)",
    "socket AF_NETLINK audit": "sock(16, 3, 9)",
    "socket AF_NETLINK uevent": "sock(16, 3, 15)",
    "socket AF_NETLINK route": "sock(16, 3, 0)",
    "socket AF_UNIX": "sock(1, 1)",
    "socket AF_INET": "sock(2, 1)",
    "socket AF_INET6": "sock(10, 1)",
}
PROBE = '''"""Try each denied call; print one ROW line per attempt; a codemod run also edits."""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sys_(nr, *args):
    ctypes.set_errno(0)
    done = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return 0 if done >= 0 else ctypes.get_errno()
def sock(family, kind, protocol=0):
    return sys_(41, family, kind, protocol)
def opened(path, mode):
    try:
        with open(path, mode) as f:
            f.read(1)
    except OSError as exc:
        return exc.errno
    return 0
ATTEMPTS = json.load(open(os.path.join(os.path.dirname(__file__), "attempts.json")))
for name, code in ATTEMPTS.items():
    print("ROW " + json.dumps([sys.argv[1], name, eval(code, {"sys": sys_, "sock": sock,
                                                             "opened": opened, "os": os})]))
for path in sys.argv[2:]:
    text = open(path).read()
    open(path, "w").write(text.replace("OLD_NAME", "NEW_NAME"))
'''
DENIED, NO_FAMILY, HIDDEN = errno.EPERM, errno.EAFNOSUPPORT, errno.ENOENT
COMMON = {
    "io_uring_setup": DENIED, "io_uring_enter": DENIED, "io_uring_register": DENIED,
    "pidfd_getfd": DENIED, "process_vm_readv": DENIED, "process_vm_writev": DENIED,
    "ptrace": DENIED, "open /proc/1/mem": HIDDEN, "open /proc/1/task/1/mem": HIDDEN,
    "read /proc/1/environ": HIDDEN,
    "socket AF_VSOCK": NO_FAMILY, "socket AF_VSOCK, high bits": NO_FAMILY,
    "socket AF_PACKET": NO_FAMILY, "socket AF_ALG": NO_FAMILY, "socket AF_BLUETOOTH": NO_FAMILY,
    "socket AF_KEY": NO_FAMILY, "socket AF_XDP": NO_FAMILY, "socket family 63": NO_FAMILY,
    "socket AF_NETLINK audit": NO_FAMILY, "socket AF_NETLINK uevent": NO_FAMILY,
    "socket AF_UNIX": 0, "socket AF_INET": 0, "socket AF_INET6": 0,
}
# What each stage must get: netlink route queries only where the command has network.
EXPECTED = {
    "setup": {**COMMON, "socket AF_NETLINK route": 0},
    "codemod": {**COMMON, "socket AF_NETLINK route": NO_FAMILY},
    "validate": {**COMMON, "socket AF_NETLINK route": NO_FAMILY},
}


def rows(output: str) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for line in output.splitlines():
        if line.startswith("ROW "):
            stage, name, got = json.loads(line.removeprefix("ROW "))
            table.setdefault(stage, {})[name] = got
    return table


def probe_files() -> dict[str, str | bytes]:
    config = {"setup": ["python tools/probe.py setup"], "network": "setup",
              "validate": ["python tools/probe.py validate"], "allow_commands": ["python"]}
    return {"src/app.py": "OLD_NAME = 1\n", "tools/probe.py": PROBE,
            "tools/attempts.json": json.dumps(ATTEMPTS),
            ".github/stepwise.yml": yaml.safe_dump(config, sort_keys=False)}


ISSUE = ("# Rename OLD_NAME\n\n```stepwise\n" + yaml.safe_dump(
    {"recipe": "command", "paths": ["src/*.py"], "find": ["OLD_NAME"],
     "run": "python tools/probe.py codemod {files}"}, sort_keys=False) + "```\n")


def test_each_stage_gets_the_denied_calls_refused(outside_tmp: Path) -> None:
    repo = outside_tmp / "repo"
    make_repo(repo, probe_files())
    local = session(repo, 3)
    local.services.sandbox = BubblewrapSandbox()
    outcome = local.run(parse_issue_file(ISSUE), yes=True)
    job = local.load()
    assert job.status is JobStatus.COMPLETED, outcome.message
    assert environment_of(job) is not None and environment_of(job).setup
    codemod, validation = job.batches[0].attempts[-1].commands
    seen = {**rows(environment_of(job).setup[0].output_tail), **rows(codemod.output_tail),
            **rows(validation.output_tail)}
    assert seen == EXPECTED


def test_without_the_filter_and_the_hidden_pid_1_the_probes_get_through(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: the table above can fail (the filter and the hidden /proc/1, not the
    namespaces or the missing capabilities, refuse these)."""
    monkeypatch.setattr(seccomp, "compiled_program", lambda **_: None)
    sandbox = BubblewrapSandbox()
    real_command = sandbox.command

    def pid_1_shown(*args: object, **kwargs: object) -> list[str]:
        cmd = real_command(*args, **kwargs)  # type: ignore[arg-type]
        start = cmd.index("/proc/1")
        return [*cmd[:start - 1], *cmd[start + 3:]]  # drop "--tmpfs /proc/1 --remount-ro"

    monkeypatch.setattr(sandbox, "command", pid_1_shown)
    make_repo(outside_tmp / "repo", probe_files())
    policy = SandboxPolicy(allow_commands=("python",), timeout=60)
    result = sandbox.run(["python", "tools/probe.py", "control"], cwd=outside_tmp / "repo",
                         policy=policy)
    got = rows(result.output_tail)["control"]
    for name in ("io_uring_setup", "io_uring_enter", "pidfd_getfd", "open /proc/1/mem",
                 "socket AF_VSOCK", "socket AF_NETLINK route", "socket AF_NETLINK uevent"):
        assert got[name] != EXPECTED["validate"][name], (name, got)
