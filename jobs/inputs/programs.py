"""Which programs may run: command-line splitting, the allowlist and the built-in blocklist."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath

# Programs that no repository config can allow: they destroy, escalate, reach out or touch git.
BLOCKED_PROGRAMS = frozenset(
    {
        "rm", "rmdir", "shred", "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat",
        "netcat", "telnet", "ftp", "git", "sudo", "su", "doas", "chmod", "chown", "chgrp",
        "dd", "mkfs", "mount", "umount", "kill", "killall", "pkill", "reboot", "shutdown",
        "halt", "systemctl", "crontab", "at", "nohup", "setsid", "sh", "bash", "zsh", "dash",
        "ksh", "fish", "csh", "tcsh", "env", "eval", "exec", "xargs", "docker", "podman",
        "bwrap", "nsenter", "unshare", "chroot", "apt", "apt-get", "dpkg",
    }
)  # fmt: skip


_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*", re.ASCII)


def split_command(text: str) -> list[str]:
    """Split a command line into argv the way a POSIX shell would, without running a shell."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot split {text!r} into arguments: {exc}") from exc
    if not argv:
        raise ValueError("the command is empty")
    return argv


def program_name(argv0: str) -> str:
    """The bare program name of argv[0] (`/usr/bin/python3` -> `python3`)."""
    return PurePosixPath(argv0).name


def _allowed(name: str, allow_commands: Sequence[str]) -> bool:
    # `python` on the list also admits `python3` and `python3.11`: same program, versioned name.
    for allowed in allow_commands:
        if name == allowed:
            return True
        rest = name.removeprefix(allowed)
        if rest != name and _VERSION.fullmatch(rest):
            return True
    return False


def refusal_reason(argv: Sequence[str], allow_commands: Sequence[str]) -> str | None:
    """Why `argv` may not run under `allow_commands`, or None when it may."""
    if not argv:
        return "the command is empty"
    argv0 = argv[0]
    name = program_name(argv0)
    if "/" in argv0:
        return f"`{argv0}` is a path; name the program (e.g. `{name}`) so the allowlist applies"
    if name in BLOCKED_PROGRAMS:
        return f"`{name}` is on the built-in blocklist and can never run"
    if not _allowed(name, allow_commands):
        return f"`{name}` is not on allow_commands; add it to allow_commands in .github/stepwise.yml"
    return None
