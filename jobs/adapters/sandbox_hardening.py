"""What bubblewrap takes away from sandboxed code beyond its own namespaces: every capability,
any further user namespace, and the syscalls the seccomp filter denies.

Namespaces: no further user namespace (so no nested user, network or mount namespace with full
capabilities in it, the usual kernel privilege-escalation surface). `--unshare-user
--disable-userns` needs bubblewrap 0.8 or later and a kernel that lets it create the user
namespace (docs/security.md says what the host must allow). Where it cannot, the sandbox still
runs, with `--cap-drop ALL` only, and says so once in the log.

The seccomp filter bubblewrap loads into every sandboxed command (`--seccomp FD`): the usual
kernel escape and introspection syscalls answer EPERM instead of running, so tools that probe
for them degrade rather than die. Compiled once with libseccomp (through `pyseccomp`) into a
classic BPF program; `filter_fd` hands it to bwrap in a memfd. What it denies (docs/security.md
lists the same families):
- debugging and reading other processes: ptrace, process_vm_readv/writev, pidfd_getfd (another
  process's descriptors);
- io_uring (io_uring_setup/enter/register): its own path to most syscalls, past this filter;
- kernel code and state: kexec_*, init/finit/delete_module, bpf, perf_event_open, iopl,
  ioperm, reboot, swapon/off, the kernel keyring (keyctl, add_key, request_key), userfaultfd,
  open_by_handle_at;
- mounts and namespaces after bubblewrap has set them up: mount, umount2, pivot_root, the new
  mount API, unshare, setns, clone with any CLONE_NEW* flag, and clone3 (whose flags a filter
  cannot read: ENOSYS, so libc falls back to clone, as Docker's default profile does);
- personality changes: only the default persona (0) and the query (0xffffffff) pass;
- sockets of any family but unix, IPv4 and IPv6 (EAFNOSUPPORT, as a kernel without the family
  answers); netlink only for route queries and only in a command with network (resolvers ask
  it which address families the host has; glibc falls back without it);
- every other syscall ABI: i386 (`int 0x80`) and x32 entries on x86_64 answer EPERM.

The sandbox's pid 1 (bubblewrap's init, outside this filter) is hidden by the sandbox itself
(`/proc/1` under an empty read-only tmpfs, jobs/adapters/sandbox.py): `/proc/1/mem` is the one
ptrace-class access no syscall rule can see.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import subprocess
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

DROP_CAPABILITIES = ("--cap-drop", "ALL")
NO_NESTED_USERNS = ("--unshare-user", "--disable-userns")


def _runs(bwrap: str, args: tuple[str, ...]) -> bool:
    probe = [bwrap, "--ro-bind", "/", "/", "--unshare-all", *args, "--", "true"]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def namespace_args(bwrap: str) -> tuple[str, ...]:
    """The bubblewrap arguments that drop every capability and forbid nested user namespaces,
    as far as this bubblewrap and kernel allow (probed once per bwrap path)."""
    hardened = (*NO_NESTED_USERNS, *DROP_CAPABILITIES)
    if _runs(bwrap, hardened):
        return hardened
    log.warning("bubblewrap cannot forbid nested user namespaces here (it needs bubblewrap "
                "0.8+ and user namespaces); sandboxed code may create its own namespaces")
    return DROP_CAPABILITIES


DENIED_SYSCALLS: tuple[str, ...] = (
    "ptrace", "process_vm_readv", "process_vm_writev",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
    "mount", "umount2", "pivot_root", "unshare", "setns", "open_by_handle_at",
    "iopl", "ioperm", "reboot", "swapon", "swapoff",
    # The mount API of Linux 5.2+ (and 5.12's mount_setattr): mounts by other names.
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    # io_uring runs its operations in kernel workers a seccomp filter never sees.
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "pidfd_getfd",
)  # fmt: skip

# clone's flags that make a new namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER,
# NEWPID, NEWNET); clone3 passes its flags in memory a filter cannot read.
NAMESPACE_CLONE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                         0x20000000, 0x40000000)
PERSONALITY_DEFAULT, PERSONALITY_QUERY = 0x0, 0xFFFFFFFF
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)  # what every command may create
NETLINK_ROUTE = 0
AF_MAX = 64  # above every family Linux has (46 in 6.x); everything from here up is refused
INT_BITS = 0xFFFFFFFF  # socket()'s domain and protocol are ints: the kernel reads 32 bits


class SeccompUnavailableError(RuntimeError):
    """libseccomp (or its binding) cannot be loaded here."""


def _library() -> Any:
    try:
        import pyseccomp  # a C library behind it: loaded only when a filter is built
    except (ImportError, RuntimeError, OSError) as exc:
        raise SeccompUnavailableError(
            f"libseccomp cannot be loaded ({exc}); install the Debian package libseccomp2 "
            "and the Python package pyseccomp"
        ) from exc
    return pyseccomp


def _personality_rules(sc: Any) -> list[tuple[Any, ...]]:
    """Deny every 32-bit persona but 0 and 0xffffffff. libseccomp compares an argument once per
    rule and ORs rules, so: a value that is neither all zeros nor all ones has, going round its
    32 bits, some set bit followed by a clear one; one masked rule per such adjacent pair."""
    rules = []
    for bit in range(32):
        set_bit, next_bit = 1 << bit, 1 << ((bit + 1) % 32)
        rules.append((sc.Arg(0, sc.MASKED_EQ, set_bit | next_bit, set_bit),))
    return rules


def _socket_rules(sc: Any, program: Any, *, netlink_route: bool) -> None:
    """Refuse `socket` for every family but SOCKET_FAMILIES (and netlink route queries when
    `netlink_route`). Rules are ORed, so each refused family is one rule."""
    refuse = sc.ERRNO(errno.EAFNOSUPPORT)
    for family in range(AF_MAX):
        if family in SOCKET_FAMILIES or family == AF_NETLINK:
            continue
        program.add_rule(refuse, "socket", sc.Arg(0, sc.MASKED_EQ, INT_BITS, family))
    program.add_rule(refuse, "socket", sc.Arg(0, sc.GE, AF_MAX))  # high bits set included
    if netlink_route:
        program.add_rule(refuse, "socket", sc.Arg(0, sc.MASKED_EQ, INT_BITS, AF_NETLINK),
                         sc.Arg(2, sc.NE, NETLINK_ROUTE))
    else:
        program.add_rule(refuse, "socket", sc.Arg(0, sc.MASKED_EQ, INT_BITS, AF_NETLINK))


def build_program(*, netlink_route: bool = False) -> bytes:
    """The filter as bwrap reads it: an array of `struct sock_filter` for the native ABI.
    `netlink_route`: a command with network may open netlink route sockets."""
    sc = _library()
    deny = sc.ERRNO(errno.EPERM)
    program = sc.SyscallFilter(sc.ALLOW)
    program.set_attr(sc.Attr.ACT_BADARCH, deny)  # i386 and x32 entries, any foreign ABI
    for name in DENIED_SYSCALLS:
        try:
            program.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):
            # libseccomp older than the syscall: the kernel may not have it either.
            log.debug("libseccomp does not know the syscall %s here", name)
    for flag in NAMESPACE_CLONE_FLAGS:
        program.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        program.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for args in _personality_rules(sc):
        program.add_rule(deny, "personality", *args)
    _socket_rules(sc, program, netlink_route=netlink_route)
    fd = os.memfd_create("stepwise-seccomp", os.MFD_CLOEXEC)
    try:
        with open(fd, "w+b", closefd=False) as out:
            program.export_bpf(out)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


@functools.cache
def compiled_program(*, network: bool = False) -> bytes | None:
    """The program for a command without (or with) network, built once per process; None
    (with one warning) where libseccomp is missing."""
    try:
        return build_program(netlink_route=network)
    except SeccompUnavailableError as exc:
        log.warning("sandboxed commands run without a seccomp filter: %s", exc)
        return None


@contextlib.contextmanager
def filter_fd(*, network: bool = False) -> Iterator[int | None]:
    """A readable descriptor positioned at the start of the program, for `--seccomp FD` and the
    child's `pass_fds`; None where no filter can be built. Closed on exit."""
    program = compiled_program(network=network)
    if program is None:
        yield None
        return
    fd = os.memfd_create("stepwise-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)
