"""What bubblewrap takes away from sandboxed code beyond its own namespaces: no capabilities,
and no further user namespace (so no nested user, network or mount namespace with full
capabilities in it, the usual kernel privilege-escalation surface).

`--unshare-user --disable-userns` needs bubblewrap 0.8 or later and a kernel that lets it
create the user namespace (docs/security.md says what the host must allow). Where it cannot,
the sandbox still runs, with `--cap-drop ALL` only, and says so once in the log.
"""

from __future__ import annotations

import functools
import logging
import subprocess

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
