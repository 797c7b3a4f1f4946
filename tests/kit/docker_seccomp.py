"""Run a command under a Docker seccomp profile, as Docker (runc) would apply it, with libseccomp
through ctypes: for a container with Docker's default capabilities on this machine's
architecture, each rule whose `includes`/`excludes` (capabilities, architectures, kernel) let it
apply becomes a libseccomp rule (its `args` conditions, MASKED_EQ taking `value` as the mask and
`valueTwo` as the datum, as runc does); syscalls libseccomp does not know are skipped, as Docker
skips them. No container engine runs where the tests run: this applies the profile's filter
itself, on the real kernel, to the real bubblewrap.

    python -m tests.kit.docker_seccomp PROFILE.json UID -- COMMAND...   # loads it, then execs
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import sys
from typing import Any

# Docker's default capability set (a container's bounding set without --cap-add).
DOCKER_DEFAULT_CAPS = frozenset({
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
    "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"})
GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
ACT_KILL_PROCESS, ACT_KILL, ACT_TRAP, ACT_LOG, ACT_ALLOW = (
    0x80000000, 0x00000000, 0x00030000, 0x7FFC0000, 0x7FFF0000)
OPS = {"SCMP_CMP_NE": 1, "SCMP_CMP_LT": 2, "SCMP_CMP_LE": 3, "SCMP_CMP_EQ": 4,
       "SCMP_CMP_GE": 5, "SCMP_CMP_GT": 6, "SCMP_CMP_MASKED_EQ": 7}
EPERM = 1


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def action(name: str, errno: int) -> int:
    if name == "SCMP_ACT_ERRNO":
        return 0x00050000 | (errno & 0xFFFF)
    if name == "SCMP_ACT_TRACE":
        return 0x7FF00000 | (errno & 0xFFFF)
    return {"SCMP_ACT_ALLOW": ACT_ALLOW, "SCMP_ACT_KILL": ACT_KILL, "SCMP_ACT_TRAP": ACT_TRAP,
            "SCMP_ACT_KILL_PROCESS": ACT_KILL_PROCESS, "SCMP_ACT_KILL_THREAD": ACT_KILL,
            "SCMP_ACT_LOG": ACT_LOG}[name]


def _kernel_at_least(wanted: str) -> bool:
    have = [int(p) for p in platform.release().split("-")[0].split(".")[:2]]
    return have >= [int(p) for p in wanted.split(".")[:2]]


def applies(rule: dict[str, Any], caps: frozenset[str], arch: str) -> bool:
    """Whether Docker applies `rule` to a container with `caps` on `arch` (moby's seccomp
    setup: any excluded cap or arch skips it; every included cap and one included arch)."""
    excludes, includes = rule.get("excludes") or {}, rule.get("includes") or {}
    if arch in (excludes.get("arches") or []) or caps & set(excludes.get("caps") or []):
        return False
    if excludes.get("minKernel") and _kernel_at_least(excludes["minKernel"]):
        return False
    if includes.get("arches") and arch not in includes["arches"]:
        return False
    if not set(includes.get("caps") or []) <= caps:
        return False
    return not (includes.get("minKernel") and not _kernel_at_least(includes["minKernel"]))


def load(profile: dict[str, Any], caps: frozenset[str] = DOCKER_DEFAULT_CAPS) -> None:
    """Build the profile's filter for this process and load it (it holds for what it execs)."""
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    default_errno = int(profile.get("defaultErrnoRet", EPERM))
    ctx = lib.seccomp_init(action(profile["defaultAction"], default_errno))
    if not ctx:
        raise OSError("seccomp_init failed")
    arch = GO_ARCH.get(platform.machine(), platform.machine())
    for rule in profile["syscalls"]:
        if not applies(rule, caps, arch):
            continue
        act = action(rule["action"], int(rule.get("errnoRet", default_errno)))
        args = rule.get("args") or []
        conditions = (ArgCmp * max(len(args), 1))(*[
            ArgCmp(a["index"], OPS[a["op"]], a["value"], a.get("valueTwo", 0)) for a in args])
        for name in rule["names"]:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:
                continue  # unknown to libseccomp here: Docker skips it too
            result = lib.seccomp_rule_add_array(ctx, act, number, len(args), conditions)
            if result < 0:
                raise OSError(-result, f"seccomp rule for {name}: {os.strerror(-result)}")
    result = lib.seccomp_load(ctx)
    if result < 0:
        raise OSError(-result, f"seccomp_load: {os.strerror(-result)}")


def main(argv: list[str]) -> None:
    path, uid, separator, *command = argv
    assert separator == "--" and command, __doc__
    profile = json.loads(open(path, encoding="utf-8").read())  # noqa: SIM115 - read whole
    if int(uid) != os.getuid():  # the worker's user is not root: neither is the command
        os.setgroups([])
        os.setgid(int(uid))
        os.setuid(int(uid))
    load(profile)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
