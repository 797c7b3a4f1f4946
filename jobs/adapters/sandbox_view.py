"""What a sandboxed command sees beyond the read-only root: the repository at one fixed place,
the job environment's outputs over it (read-only), and the egress proxy when it may use the network.

The repository is always at REPO_MOUNT inside the sandbox, whatever the worktree's real path, so
what `setup` builds there (a virtualenv's scripts, an editable install's path) stays valid for
every later command of every job that reuses the environment.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from jobs.adapters import tree_fd
from jobs.adapters.environments import PROGRAM_DIRS
from jobs.inputs.sandboxing import EnvironmentLayer

REPO_MOUNT = Path("/tmp/stepwise/repo")  # noqa: S108 - inside the sandbox's private /tmp
# The environment's writable tool caches (`<environment>/caches` on the host), shared by every
# command of every job with the same environment key; the environment itself stays read-only.
CACHE_MOUNT = Path("/tmp/stepwise/cache")  # noqa: S108 - inside the sandbox's private /tmp
# Where each tool keeps its cache, under CACHE_MOUNT (pytest's is an option: it has no variable;
# CACHE_DIR is find-cache-dir's, which ava, xo, babel-loader and nyc use for node_modules/.cache).
TOOL_CACHES = {
    "XDG_CACHE_HOME": "xdg", "PIP_CACHE_DIR": "pip", "UV_CACHE_DIR": "uv",
    "npm_config_cache": "npm", "YARN_CACHE_FOLDER": "yarn", "CACHE_DIR": "node",
    "RUFF_CACHE_DIR": "ruff", "MYPY_CACHE_DIR": "mypy",
}
RUN_DIR = Path("/run/stepwise")
EGRESS_SOCKET = RUN_DIR / "egress.sock"
FORWARDER = RUN_DIR / "egress_forward.py"
PROXY_PORT = 3128
PROXY_URL = f"http://127.0.0.1:{PROXY_PORT}"
FORWARDER_SOURCE = Path(__file__).with_name("egress_forward.py")
# The operator's trust store settings (paths, never secrets): a registry behind a corporate
# TLS proxy is reachable from the sandbox only if its tools trust the same certificates.
TRUST_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
                   "PIP_CERT", "CURL_CA_BUNDLE")


def program_path(path_value: str, root: Path) -> str:
    """PATH with the environment's program directories (under `root`) first."""
    return os.pathsep.join([*(str(root / rel) for rel in PROGRAM_DIRS), path_value])


def lookup_path(path_value: str, *, cwd: Path, environment: EnvironmentLayer | None) -> str:
    """The host-side equivalent of the sandbox's PATH, to check that a program exists."""
    dirs = []
    for rel in PROGRAM_DIRS:
        top = rel.split("/")[0]
        if environment is not None and top in environment.entries:
            dirs.append(str(environment.tree / rel))
        else:
            dirs.append(str(cwd / rel))
    return os.pathsep.join([*dirs, path_value])


def trust_environment() -> dict[str, str]:
    found = {}
    for name in TRUST_VARIABLES:
        value = os.environ.get(name, "")
        if value and Path(value).exists() and not value.startswith("/tmp"):  # noqa: S108
            found[name] = value
    return found


def proxy_environment() -> dict[str, str]:
    return {name: PROXY_URL for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY",
                                         "http_proxy")} | {"NO_PROXY": "", "no_proxy": ""}


def environment_binds(environment: EnvironmentLayer | None) -> list[str]:
    """bubblewrap arguments laying the environment's outputs, read-only, over the repository.

    A symlink is never bound: bubblewrap would follow it on the host, past the hidden paths."""
    if environment is None:
        return []
    args: list[str] = []
    for rel in environment.entries:
        source = environment.tree / rel
        if source.is_symlink() or not (source.is_dir() or source.is_file()):
            continue
        args += ["--ro-bind", str(source), str(REPO_MOUNT / rel)]
    return args


def cache_environment(environment: EnvironmentLayer | None) -> dict[str, str]:
    """The variables pointing each tool at its writable cache (none without a cache dir)."""
    if environment is None or not _usable_caches(environment.caches):
        return {}
    found = {name: str(CACHE_MOUNT / sub) for name, sub in TOOL_CACHES.items()}
    found["PYTEST_ADDOPTS"] = f"-o cache_dir={CACHE_MOUNT / 'pytest'}"
    return found


def cache_binds(environment: EnvironmentLayer | None) -> list[str]:
    """bubblewrap arguments binding the environment's cache directory, writable."""
    if environment is None or not _usable_caches(environment.caches):
        return []
    return ["--bind", str(environment.caches), str(CACHE_MOUNT)]


def _usable_caches(path: Path) -> bool:
    """A real directory Stepwise made (never a link: bubblewrap would follow it on the host)."""
    return path.is_dir() and not path.is_symlink()


def egress_binds(socket_path: Path) -> list[str]:
    return ["--ro-bind", str(socket_path), str(EGRESS_SOCKET),
            "--ro-bind", str(FORWARDER_SOURCE), str(FORWARDER)]


def egress_wrap(argv: Sequence[str]) -> list[str]:
    """`argv` run under the forwarder, which serves the proxy on the sandbox's loopback."""
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    return [python, "-I", "-S", str(FORWARDER), str(EGRESS_SOCKET), str(PROXY_PORT), "--",
            *argv]


def remove_mount_stubs(cwd: Path, environment: EnvironmentLayer | None) -> None:
    """bubblewrap creates an empty file or directory in the worktree where it binds an entry;
    remove those after the command, so they never look like a change. The command may have
    replaced a parent with a link to a host path: every step goes through directory
    descriptors without following links (jobs/adapters/tree_fd.py)."""
    if environment is None:
        return
    for rel in sorted(environment.entries, key=lambda r: -r.count("/")):
        tree_fd.remove_if_empty(cwd, rel)
        tree_fd.remove_empty_parents(cwd, rel)  # bubblewrap also made a nested entry's parents


def merged_env(base: Mapping[str, str], *, network: bool) -> dict[str, str]:
    env = dict(base) | trust_environment()
    if network:
        env |= proxy_environment()
    return env
