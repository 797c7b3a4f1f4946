"""The sandbox's seccomp filter (jobs/adapters/sandbox_hardening.py): each escape family answers
EPERM inside the sandbox (and answers otherwise without the filter, so these tests can fail),
the compiled program says so for every denied syscall, and everyday toolchains still work."""

from __future__ import annotations

import errno
import json
import platform
from pathlib import Path

import pytest

from jobs.adapters import sandbox_hardening as seccomp
from jobs.adapters.sandbox import BubblewrapSandbox, SandboxPolicy
from tests.security import hostile
from tests.security.bpf_program import (
    AUDIT_ARCH_I386,
    SECCOMP_RET_ALLOW,
    X32_SYSCALL_BIT,
    errno_action,
    evaluate,
)

pytestmark = [hostile.needs_bwrap,
              pytest.mark.skipif(platform.machine() != "x86_64",
                                 reason="the syscall numbers below are x86_64's")]

EPERM, ENOSYS = errno_action(errno.EPERM), errno_action(errno.ENOSYS)
# x86_64 numbers, written out here rather than asked of libseccomp (the library under test).
X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kexec_load": 246,
    "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248, "request_key": 249,
    "userfaultfd": 323, "mount": 165, "umount2": 166, "pivot_root": 155, "unshare": 272,
    "setns": 308, "open_by_handle_at": 304, "iopl": 172, "ioperm": 173, "reboot": 169,
    "swapon": 167, "swapoff": 168, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "pidfd_getfd": 438,
}  # fmt: skip
EVERYDAY = {"read": 0, "write": 1, "mmap": 9, "openat": 257, "execve": 59, "wait4": 61,
            "getpid": 39, "futex": 202, "prctl": 157}
CLONE, CLONE3, PERSONALITY, SIGCHLD, SOCKET = 56, 435, 135, 17, 41
PTHREAD_CLONE_FLAGS = 0x003D0F00  # what glibc's pthread_create passes to clone


@pytest.fixture(scope="module")
def program() -> bytes:
    built = seccomp.compiled_program()
    assert built is not None, "libseccomp is missing: install libseccomp2 (scripts/test does)"
    return built


def test_the_filter_covers_every_denied_family() -> None:
    assert set(seccomp.DENIED_SYSCALLS) == set(X86_64)


@pytest.mark.parametrize("name", sorted(X86_64))
def test_the_compiled_program_answers_eperm_to_each_denied_syscall(program: bytes,
                                                                  name: str) -> None:
    assert evaluate(program, nr=X86_64[name]) == EPERM


@pytest.mark.parametrize("name", sorted(EVERYDAY))
def test_the_compiled_program_lets_everyday_syscalls_through(program: bytes, name: str) -> None:
    assert evaluate(program, nr=EVERYDAY[name]) == SECCOMP_RET_ALLOW


def test_clone_is_refused_only_with_a_namespace_flag(program: bytes) -> None:
    assert evaluate(program, nr=CLONE, args=[SIGCHLD]) == SECCOMP_RET_ALLOW  # fork
    assert evaluate(program, nr=CLONE, args=[PTHREAD_CLONE_FLAGS]) == SECCOMP_RET_ALLOW
    for flag in seccomp.NAMESPACE_CLONE_FLAGS:
        assert evaluate(program, nr=CLONE, args=[flag | SIGCHLD]) == EPERM, hex(flag)
    assert evaluate(program, nr=CLONE3) == ENOSYS  # libc falls back to clone


@pytest.mark.parametrize("network", [False, True])
def test_sockets_only_of_the_families_a_command_needs(network: bool) -> None:
    built = seccomp.compiled_program(network=network)
    assert built is not None
    no_family = errno_action(errno.EAFNOSUPPORT)
    for family in (1, 2, 10):  # unix, IPv4, IPv6
        assert evaluate(built, nr=SOCKET, args=[family, 1, 0]) == SECCOMP_RET_ALLOW
    for family in (0, 3, 9, 15, 17, 29, 31, 38, 40, 44, 45, 63, 64, 1 << 20, 2 | 1 << 32):
        assert evaluate(built, nr=SOCKET, args=[family, 1, 0]) == no_family, family
    route = evaluate(built, nr=SOCKET, args=[16, 3, 0])
    assert route == (SECCOMP_RET_ALLOW if network else no_family)
    for protocol in (9, 15, 4, 0 | 1 << 32):  # audit, uevent, sock_diag, route in disguise
        assert evaluate(built, nr=SOCKET, args=[16, 3, protocol]) == no_family, protocol


def test_only_the_default_persona_and_the_query_pass(program: bytes) -> None:
    for allowed in (0, 0xFFFFFFFF):
        assert evaluate(program, nr=PERSONALITY, args=[allowed]) == SECCOMP_RET_ALLOW
    for persona in (0x0040000, 0x0400000, 0x0008, 0x1, 0x80000000, 0xFFFFFFFE, 0x7FFFFFFF):
        assert evaluate(program, nr=PERSONALITY, args=[persona]) == EPERM, hex(persona)
        # the kernel reads an unsigned int: high bits must not smuggle a persona past
        assert evaluate(program, nr=PERSONALITY, args=[persona | 1 << 40]) == EPERM


def test_other_syscall_abis_are_refused(program: bytes) -> None:
    assert evaluate(program, nr=20, arch=AUDIT_ARCH_I386) == EPERM  # getpid via int 0x80
    assert evaluate(program, nr=X32_SYSCALL_BIT | 39) == EPERM  # x32 getpid
    assert evaluate(program, nr=X32_SYSCALL_BIT | 101) == EPERM  # x32 ptrace


PROBE = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(value):
    return value if isinstance(value, bytes) else ctypes.c_long(value)
def sys(nr, *args):
    ctypes.set_errno(0)
    return libc.syscall(ctypes.c_long(nr), *map(arg, args)), ctypes.get_errno()
def fork_raw(flags):
    done = sys(56, flags | 17, 0, 0, 0, 0)
    if done[0] == 0:
        os._exit(0)
    if done[0] > 0:
        os.waitpid(done[0], 0)
    return done
attempts = json.loads(os.environ["ATTEMPTS"])
for name, code in attempts.items():
    print("RESULT " + json.dumps([name, eval(code)]))
"""
# Arguments that run (or fail with another errno) where nothing filters the call.
ATTEMPTS = {
    "ptrace": "sys(101, 0, 0, 0, 0)",  # PTRACE_TRACEME
    "process_vm_readv": "sys(310, os.getpid(), 0, 0, 0, 0, 0)",
    "process_vm_writev": "sys(311, os.getpid(), 0, 0, 0, 0, 0)",
    "kexec_load": "sys(246, 0, 0, 0, 0)",
    "kexec_file_load": "sys(320, -1, -1, 0, 0, 0)",
    "init_module": "sys(175, 0, 0, b'')",
    "finit_module": "sys(313, -1, b'', 0)",
    "delete_module": "sys(176, b'stepwise_none', 0)",
    "bpf": "sys(321, 0, 0, 0)",
    "perf_event_open": "sys(298, 0, 0, -1, -1, 0)",
    "keyctl": "sys(250, 0, -3, 0)",  # KEYCTL_GET_KEYRING_ID of the session keyring
    "add_key": "sys(248, b'user', b'stepwise', b'x', 1, -2)",
    "request_key": "sys(249, b'user', b'stepwise-none', 0, -2)",
    "userfaultfd": "sys(323, 1)",  # UFFD_USER_MODE_ONLY
    "mount": "sys(165, b'none', b'/tmp', b'tmpfs', 0, 0)",
    "umount2": "sys(166, b'/tmp', 0)",
    "pivot_root": "sys(155, b'/tmp', b'/tmp')",
    "unshare": "sys(272, 0x10000000)",
    "setns": "sys(308, -1, 0)",
    "open_by_handle_at": "sys(304, -1, 0, 0)",
    "iopl": "sys(172, 3)",
    "ioperm": "sys(173, 0x80, 1, 1)",
    "reboot": "sys(169, 0, 0, 0, 0)",
    "swapon": "sys(167, b'/tmp/none', 0)",
    "swapoff": "sys(168, b'/tmp/none')",
    "fsopen": "sys(430, b'tmpfs', 0)",
    "clone(CLONE_NEWUSER)": "fork_raw(0x10000000)",
    "clone(CLONE_NEWNET)": "fork_raw(0x40000000)",
    "personality(ADDR_NO_RANDOMIZE)": "sys(135, 0x0040000)",
    "x32 getpid": "sys(0x40000000 | 39)",
}
# Without the filter these answer something other than EPERM on any kernel the sandbox runs on.
DISCRIMINATING = ("ptrace", "process_vm_readv", "perf_event_open", "setns",
                  "personality(ADDR_NO_RANDOMIZE)", "x32 getpid")


def _probe(tmp_path: Path, attempts: dict[str, str]) -> dict[str, list[int]]:
    policy = SandboxPolicy(allow_commands=("python3",), timeout=60,
                           env={"ATTEMPTS": json.dumps(attempts)})
    result = BubblewrapSandbox().run(["python3", "-c", PROBE], cwd=tmp_path, policy=policy)
    assert result.exit_code == 0, result.output_tail
    lines = [x.removeprefix("RESULT ") for x in result.output_tail.splitlines()
             if x.startswith("RESULT ")]
    results = dict(json.loads(line) for line in lines)
    assert set(results) == set(attempts), result.output_tail
    return results


def test_each_escape_family_gets_eperm_inside_the_sandbox(tmp_path: Path) -> None:
    results = _probe(tmp_path, ATTEMPTS)
    wrong = {name: got for name, got in results.items() if got != [-1, errno.EPERM]}
    assert not wrong, f"not refused with EPERM: {wrong}"


def test_without_the_filter_the_same_probes_get_through(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the attack test above can fail (the filter, not the namespaces or the
    missing capabilities, is what answers these with EPERM)."""
    monkeypatch.setattr(seccomp, "compiled_program", lambda **_: None)
    results = _probe(tmp_path, {name: ATTEMPTS[name] for name in DISCRIMINATING})
    assert all(got != [-1, errno.EPERM] for got in results.values()), results


I386_GETPID = bytes.fromhex("b814000000" "cd80" "c3")  # mov eax, 20; int 0x80; ret
I386_PROBE = f"""
import ctypes, mmap
code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
code.write({I386_GETPID!r})
address = ctypes.addressof(ctypes.c_char.from_buffer(code))
print("I386", ctypes.CFUNCTYPE(ctypes.c_int)(address)())
"""


def test_the_i386_entry_answers_eperm(tmp_path: Path) -> None:
    policy = SandboxPolicy(allow_commands=("python3",), timeout=30)
    result = BubblewrapSandbox().run(["python3", "-c", I386_PROBE], cwd=tmp_path, policy=policy)
    assert f"I386 {-errno.EPERM}" in result.output_tail, result.output_tail


def test_everyday_toolchains_still_work_under_the_filter(outside_tmp: Path) -> None:
    repo = outside_tmp / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_ok.py").write_text(
        "import subprocess, sys, threading, multiprocessing\n"
        "def square(x):\n    return x * x\n"
        "def test_threads_processes_and_children():\n"
        "    t = threading.Thread(target=print); t.start(); t.join()\n"
        "    with multiprocessing.get_context('fork').Pool(2) as pool:\n"
        "        assert pool.map(square, [1, 2, 3]) == [1, 4, 9]\n"
        "    assert subprocess.run([sys.executable, '-c', 'print(1)']).returncode == 0\n")
    policy = SandboxPolicy(allow_commands=("python", "node"), timeout=120,
                           env={"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
                                "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"})
    sandbox = BubblewrapSandbox()
    runs = [["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
            # git is on the blocklist as a program of its own; tools still run it
            ["python", "-c", "import subprocess as s; s.run(['git', 'init', '-q', 'inner'],"
             " check=True); s.run(['git', '-C', 'inner', 'commit', '-q', '--allow-empty',"
             " '-m', 'x'], check=True)"],
            ["node", "-e", "const {Worker} = require('worker_threads');"
             "require('child_process').execFileSync('node', ['-e', '1']);"
             "new Worker('1', {eval: true}).on('exit', c => process.exit(c))"]]
    for argv in runs:
        result = sandbox.run(argv, cwd=repo, policy=policy)
        assert result.exit_code == 0, (argv, result.output_tail)
