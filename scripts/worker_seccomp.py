"""Write the worker's seccomp profile (deploy/seccomp/stepwise-worker.json) from Docker's default
profile (deploy/seccomp/docker-default.json) plus only what bubblewrap needs for its namespaces.

Docker's default lets a process without CAP_SYS_ADMIN call `clone` only without namespace flags
(an argument filter), answers `clone3` with ENOSYS, and allows `unshare`, `setns`, `mount` and
`umount2` only with CAP_SYS_ADMIN; `pivot_root` is not allowed at all. bubblewrap, unprivileged,
needs each of them to build the sandbox's user, mount, PID and network namespaces. The worker's
profile takes those seven syscalls out of every rule of the default that names them and allows
them in one rule of its own, without argument filters or capability conditions; it also takes
io_uring out (Docker's default of this version allows it; newer ones refuse it too): its
operations run in kernel workers the filter never sees, and neither the worker nor a sandboxed
command needs it. Every other rule is the default's, unchanged (tests/test_deploy_files.py checks
exactly that).

    .venv/bin/python scripts/worker_seccomp.py [--check]
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

SECCOMP = Path(__file__).resolve().parent.parent / "deploy" / "seccomp"
DEFAULT = SECCOMP / "docker-default.json"
WORKER = SECCOMP / "stepwise-worker.json"
BUBBLEWRAP_SYSCALLS = ("clone", "clone3", "unshare", "setns", "mount", "umount2", "pivot_root")
REFUSED_SYSCALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
COMMENT = ("stepwise: bubblewrap builds the sandbox's user, mount, PID and network namespaces "
           "without CAP_SYS_ADMIN (docs/operating.md)")


def worker_profile(default: dict[str, Any]) -> dict[str, Any]:
    """`default` with BUBBLEWRAP_SYSCALLS moved out of its rules into one unconditional allow,
    and REFUSED_SYSCALLS out of every rule (the default action refuses them)."""
    profile = copy.deepcopy(default)
    rules = []
    for rule in profile["syscalls"]:
        names = [name for name in rule["names"]
                 if name not in BUBBLEWRAP_SYSCALLS and name not in REFUSED_SYSCALLS]
        if names:
            rules.append({**rule, "names": names})
    rules.append({"names": list(BUBBLEWRAP_SYSCALLS), "action": "SCMP_ACT_ALLOW", "args": [],
                  "comment": COMMENT, "includes": {}, "excludes": {}})
    profile["syscalls"] = rules
    return profile


def rendered() -> str:
    return json.dumps(worker_profile(json.loads(DEFAULT.read_text())), indent="\t") + "\n"


def main(argv: list[str]) -> int:
    text = rendered()
    if "--check" in argv:
        if not WORKER.is_file() or WORKER.read_text() != text:
            sys.stderr.write(f"{WORKER} is out of date: run scripts/worker_seccomp.py\n")
            return 1
        return 0
    WORKER.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
