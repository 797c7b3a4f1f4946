"""The sandboxes that run untrusted repository commands (argv only, allowlisted, scrubbed
environment, timed): `BubblewrapSandbox`, `PlainSandbox` where bubblewrap is unusable and
allowed, and `make_sandbox` choosing between them. The policy and result types are
jobs/inputs/sandboxing.py (re-exported here), the process group and output tail
sandbox_process.py, the fixed repository path and binds sandbox_view.py, what is bound back
from the places the sandbox hides (PATH's tools, `env`'s paths) sandbox_reach.py; the port is
`jobs.ports.Sandbox`."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jobs.adapters import sandbox_hardening as hardening
from jobs.adapters import sandbox_reach as reach
from jobs.adapters import sandbox_view as view
from jobs.adapters import scratch
from jobs.adapters.egress import EgressProxy, EgressRecord
from jobs.adapters.host_programs import host_program
from jobs.adapters.sandbox_process import (
    TAIL_LINE_CHARS,
    TAIL_LINES,
    TAIL_READ_BYTES,
    TAIL_TOTAL_CHARS,
    execute,
    not_run,
)
from jobs.basics.errors import ConfigError, RetryClass, StepwiseError
from jobs.inputs import caps
from jobs.inputs.programs import refusal_reason
from jobs.inputs.sandboxing import CommandRefusedError, CommandResult, EnvironmentLayer, SandboxPolicy
from jobs.ports import Sandbox

__all__ = [
    "BASE_ENV",
    "SANDBOX_HOME",
    "TAIL_LINES",
    "TAIL_LINE_CHARS",
    "TAIL_READ_BYTES",
    "TAIL_TOTAL_CHARS",
    "BubblewrapSandbox",
    "CommandRefusedError",
    "CommandResult",
    "PlainSandbox",
    "Sandbox",
    "SandboxPolicy",
    "bubblewrap_available",
    "build_environment",
    "make_sandbox",
    "reset_sandbox_caches",
]

log = logging.getLogger(__name__)

TMP = "/tmp"  # noqa: S108 - inside bubblewrap this is a private tmpfs
SANDBOX_HOME = Path(TMP, "home")

# Credential stores kept in the home folder of the user running Stepwise, hidden from every
# sandboxed command like the policy's hidden paths. The rest of that home stays visible read-only
# because toolchains live there (pyenv, rustup, nvm); configuration that is also a build's input
# (.npmrc, pip.conf, .m2) stays too (docs/security.md, "What the sandbox shows").
HOME_CREDENTIALS = (
    ".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".git-credentials",
    ".config/git/credentials", ".netrc", ".pypirc", ".pgpass", ".vault-token", ".aws", ".azure",
    ".kube", ".docker", ".config/gh", ".config/hub", ".config/gcloud", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".terraform.d/credentials.tfrc.json",
)


def home_credentials() -> tuple[Path, ...]:
    """The credential stores (HOME_CREDENTIALS) in the home folder of the user running Stepwise."""
    home = Path(os.path.expanduser("~"))
    if not home.is_absolute() or home == Path("/"):
        return ()
    return tuple(home / name for name in HOME_CREDENTIALS)


# Fixed variables every command gets. CI=true: tools then behave as in unattended CI (no
# watch modes, prompts or spinners, which would otherwise hang until the timeout); a repo
# that needs something else sets it in `env`, which is applied on top.
BASE_ENV = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TMPDIR": TMP, "CI": "true"}
BASE_ENV |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


def build_environment(policy: SandboxPolicy, *, home: Path, root: Path) -> dict[str, str]:
    """The whole environment of a command: built from scratch, never inherited (except PATH,
    with the environment's program directories under `root` first, and the trust store)."""
    path = view.program_path(os.environ.get("PATH") or os.defpath, root)
    env = {"PATH": path, "HOME": str(home), **BASE_ENV}
    if root == view.REPO_MOUNT:  # bubblewrap: the caches are bound there (view.cache_binds)
        env |= view.cache_environment(policy.environment)
    env = view.merged_env(env, network=policy.network)
    for key, value in policy.env.items():
        if not key or "=" in key or "\0" in key or "\0" in str(value):
            raise ConfigError(
                f"env entry {key!r} is not a valid environment variable",
                hint="use NAME: value pairs without '=' or NUL characters in env",
            )
        env[key] = str(value)
    return env


def _prepare(argv: Sequence[str], cwd: Path, policy: SandboxPolicy, env: dict[str, str]) -> str:
    """Refuse what may not run; return '' or a not-found message. Raises on a missing cwd."""
    reason = refusal_reason(argv, policy.allow_commands)
    if reason is not None:
        raise CommandRefusedError(argv, reason)
    if not cwd.is_dir():
        msg, hint = f"the working directory {cwd} does not exist", "its worktree is gone; retry"
        raise StepwiseError(msg, code="sandbox_cwd_missing", hint=hint)
    if reach.found_on_path(argv[0], cwd, policy) is None:
        return f"{argv[0]}: command not found (searched PATH={env['PATH']})"
    return ""


def _describe(record: EgressRecord) -> str:
    where = f"{record.host}:{record.port}"
    return f"{where} allowed" if record.allowed else f"{where} refused: {record.reason}"


class PlainSandbox:
    """No namespaces: the same allowlist, scrubbed environment, timeouts and group kill."""

    isolated = False

    def run(
        self, argv: Sequence[str], *, cwd: Path, policy: SandboxPolicy,
        writable: Sequence[Path] = (),
    ) -> CommandResult:  # fmt: skip
        private = scratch.private_of(cwd)
        if private is not None:  # nothing keeps a command's writes apart here
            scratch.written_through(private)
        with tempfile.TemporaryDirectory(prefix="stepwise-home-", ignore_cleanup_errors=True) as h, \
                _linked_environment(cwd, policy.environment):
            env = build_environment(replace(policy, network=False), home=Path(h), root=cwd)
            missing = _prepare(argv, cwd, policy, env)
            if missing:
                return not_run(argv, 127, missing, self.isolated)
            return execute(
                argv, argv, cwd=cwd, env=env, timeout=policy.timeout, isolated=self.isolated,
                should_stop=policy.should_stop,
            )


@contextlib.contextmanager
def _linked_environment(cwd: Path, environment: EnvironmentLayer | None) -> Iterator[None]:
    """Without bubblewrap nothing can be bound: the environment's entries are linked into the
    worktree for the command's duration (the key then includes the worktree's path)."""
    made: list[Path] = []
    try:
        for rel in environment.entries if environment is not None else ():
            link = cwd / rel
            if not os.path.lexists(link):
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(environment.tree / rel)  # type: ignore[union-attr]
                made.append(link)
        yield
    finally:
        for link in made:
            with contextlib.suppress(OSError):
                link.unlink()


class BubblewrapSandbox:
    """bubblewrap: read-only root, private /tmp, no network, hidden paths, own PID namespace."""

    isolated = True

    def __init__(self, bwrap: str | None = None) -> None:
        found = bwrap or host_program("bwrap")
        if found is None:
            raise _unavailable("bubblewrap (bwrap) is not installed")
        self.bwrap = found

    def command(
        self, argv: Sequence[str], *, cwd: Path, policy: SandboxPolicy, env: Mapping[str, str],
        writable: Sequence[Path] = (), empty_file: Path | None = None,
        egress_socket: Path | None = None, seccomp_fd: int | None = None,
        seen: reach.View | None = None, apart: Path | None = None,
    ) -> list[str]:  # fmt: skip
        """The full bwrap argv that runs `argv` (exposed for tests and debugging).

        The network namespace is always private (a loopback only); with `egress_socket` the
        command reaches the egress proxy through it, and nothing else. With `apart` (the
        worktree's private git directory) the command sees the worktree through an overlay
        whose upper directory is kept there (jobs/adapters/scratch.py), as the same user."""
        real_cwd = cwd.resolve()
        cmd = []
        if apart is not None:
            cmd += scratch.launcher(host_program("unshare") or "/usr/bin/unshare",
                                    host_program("mount") or "/usr/bin/mount", real_cwd, apart)
        cmd += [self.bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # pid 1 is bubblewrap's init, outside the seccomp filter: /proc/1/mem would reach it.
        cmd += ["--tmpfs", "/proc/1", "--remount-ro", "/proc/1"]
        cmd += ["--tmpfs", TMP, "--dir", str(SANDBOX_HOME), "--unshare-all"]
        cmd += hardening.namespace_args(self.bwrap)
        if apart is not None:  # bubblewrap runs as the namespace's root: map the user back
            cmd += ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
        if seccomp_fd is not None:  # loaded last, just before the command runs
            cmd += ["--seccomp", str(seccomp_fd)]
        # Sockets of host services (docker.sock, dbus, ...) live under /run: out of reach.
        if Path("/run").is_dir():
            cmd += ["--tmpfs", "/run"]
        # The private /tmp (and the empty /run) must not hide the tools on PATH or the paths
        # `env` names: bound read-only before the hidden paths, which stay hidden.
        if seen is None:
            seen = reach.plan_view(env.get("PATH", ""), policy.env, reach.places_for(cwd, policy, writable))
        cmd += seen.args()
        cmd += ["--die-with-parent", "--new-session", "--clearenv"]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        # Mounts apply in order: hide first, then bind the writable paths back on top.
        for hidden in (*policy.hidden_paths, *home_credentials()):
            path = hidden.resolve()
            if path.is_dir():
                cmd += ["--tmpfs", str(path)]
            elif path.exists() and empty_file is not None:  # a single file, e.g. a key
                cmd += ["--ro-bind", str(empty_file), str(path)]
        shown = scratch.layers(apart)[2] if apart is not None else real_cwd
        cmd += ["--bind", str(shown), str(view.REPO_MOUNT)]
        cmd += view.environment_binds(policy.environment)
        cmd += view.cache_binds(policy.environment)
        for path in dict.fromkeys(p.resolve() for p in writable):
            cmd += ["--bind", str(path), str(path)]
        if egress_socket is not None:
            cmd += view.egress_binds(egress_socket)
            argv = view.egress_wrap(argv)
        return [*cmd, "--chdir", str(view.REPO_MOUNT), "--", *argv]

    def run(
        self, argv: Sequence[str], *, cwd: Path, policy: SandboxPolicy,
        writable: Sequence[Path] = (),
    ) -> CommandResult:  # fmt: skip
        env = build_environment(policy, home=SANDBOX_HOME, root=view.REPO_MOUNT)
        missing = _prepare(argv, cwd, policy, env)
        if missing:
            return not_run(argv, 127, missing, self.isolated)
        places = reach.places_for(cwd, policy, writable)
        found = reach.found_on_path(argv[0], cwd, policy)
        seen = reach.plan_view(env["PATH"], policy.env, places,
                               program=found[0] if found is not None else None)
        unseen = "; ".join(seen.refusals) or reach.why_not_run(argv[0], cwd, policy, places, seen)
        if unseen:
            return not_run(argv, 127, unseen, self.isolated)
        apart = self.keeps_apart(cwd, policy, writable)
        with contextlib.ExitStack() as stack:
            empty = stack.enter_context(tempfile.NamedTemporaryFile(prefix="stepwise-empty-"))
            proxy = None
            if policy.network:
                proxy = stack.enter_context(EgressProxy(policy.network_allow,
                                                        deny_hosts=policy.network_deny_hosts))
            program = stack.enter_context(hardening.filter_fd(network=policy.network))
            cmd = self.command(argv, cwd=cwd, policy=policy, env=env, writable=writable,
                               empty_file=Path(empty.name),
                               egress_socket=proxy.socket_path if proxy else None,
                               seccomp_fd=program, seen=seen, apart=apart)
            try:
                # bubblewrap sets the command's environment itself (--clearenv, --setenv)
                launched = env if apart is None else scratch.LAUNCH_ENV
                result = execute(argv, cmd, cwd=cwd, env=launched, timeout=policy.timeout,
                                  isolated=True, should_stop=policy.should_stop,
                                  pass_fds=() if program is None else (program,))
            finally:
                if apart is None:  # with the overlay they were made in its upper directory
                    view.remove_mount_stubs(cwd, policy.environment)
            if proxy is not None:
                result = replace(result, egress=caps.egress_records(
                    [_describe(r) for r in proxy.records], dropped=proxy.dropped))
        if result.exit_code in (1, 127) and result.output_tail.startswith("bwrap: execvp "):
            # Found on the host's PATH but not in the sandbox's view: say where, and why.
            why = reach.why_not_run(argv[0], cwd, policy, places, seen) or (
                f"`{argv[0]}` is on the PATH of the process that runs Stepwise but not "
                "visible in the sandbox (a link or an interpreter outside its view)")
            return replace(result, exit_code=127,
                           output_tail=f"{why}\n{result.output_tail.splitlines()[0]}")
        return result

    def keeps_apart(self, cwd: Path, policy: SandboxPolicy,
                    writable: Sequence[Path]) -> Path | None:
        """The private git directory that keeps this command's writes apart from the job's
        worktree `cwd`, or None: the command writes through, and the worktree's record of
        what Stepwise wrote is dropped (jobs/adapters/scratch.py)."""
        private = scratch.private_of(cwd)
        if private is None:
            return None
        real = cwd.resolve()
        why = "" if policy.writes_through else _overlay_refusal(self.bwrap)
        if not why and not (scratch.carried(real) and scratch.carried(private.resolve())):
            why = f"an overlay cannot take the worktree's path {real}"
        if not why and any(path.resolve().is_relative_to(real) for path in writable):
            why = "a writable directory lies inside the worktree"
        if policy.writes_through or why:
            scratch.written_through(private, why)
            return None
        return private


@functools.cache
def _overlay_refusal(bwrap: str) -> str:
    """'' when a command's writes can be kept in an overlay here (`unshare` and `mount` from
    util-linux, and a kernel that mounts overlayfs in an unprivileged user namespace: Linux
    5.11+), else why not. Probed once per bwrap path with a real write."""
    if host_program("unshare") is None or host_program("mount") is None:
        return "unshare or mount (util-linux) is not installed"
    pol, env = SandboxPolicy(allow_commands=("sh",)), {"PATH": "/usr/bin:/bin"}
    with tempfile.TemporaryDirectory(prefix="stepwise-overlay-probe-") as folder:
        lower, private = Path(folder, "w"), Path(folder, "w.git")
        lower.mkdir()
        private.mkdir()
        (private / "commondir").write_text("probe\n", encoding="utf-8")
        (lower / "kept").write_text("kept\n", encoding="utf-8")
        (lower / "sub").mkdir()
        (lower / "sub" / "file").write_text("file\n", encoding="utf-8")
        probe = BubblewrapSandbox(bwrap).command(
            ["/bin/sh", "-c", "echo changed > kept && echo made > made && rm -r sub"],
            cwd=lower, policy=pol, env=env, apart=private)
        try:
            done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=10, env=scratch.LAUNCH_ENV)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the overlay probe did not run: {exc}"
        upper = private / scratch.SCRATCH / "upper"
        kept = (lower / "kept").read_text(encoding="utf-8") == "kept\n"
        if done.returncode != 0 or not kept or (lower / "made").exists() \
                or not (upper / "made").is_file() or not (lower / "sub" / "file").is_file():
            said = done.stderr.decode(errors="replace").strip()[-200:]
            return f"the kernel refused an overlay in a user namespace ({said or 'no output'})"
        scratch.drop(private)
    return ""


def _unavailable(message: str) -> StepwiseError:
    hint = "install bubblewrap (apt-get install bubblewrap) or set STEPWISE_ALLOW_UNSANDBOXED=1"
    return StepwiseError(message, code="sandbox_unavailable", retry_class=_NO_RETRY, hint=hint)


_NO_RETRY = RetryClass.DO_NOT_RETRY
_warned: list[bool] = []  # non-empty once the "running unsandboxed" warning was logged


@functools.cache
def _probe(bwrap: str) -> bool:
    """Whether `bwrap` can really build a sandbox here (user namespaces may be disabled)."""
    pol, env = SandboxPolicy(allow_commands=("true",)), {"PATH": "/usr/bin:/bin"}
    try:
        with tempfile.TemporaryDirectory(prefix="stepwise-probe-") as cwd:
            probe = BubblewrapSandbox(bwrap).command(["true"], cwd=Path(cwd), policy=pol, env=env)
            done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    if done.returncode != 0:
        log.debug("bubblewrap probe failed: %s", done.stderr.decode(errors="replace").strip())
    return done.returncode == 0


def bubblewrap_available() -> bool:
    """`bwrap` is on PATH and a probe sandbox runs (the probe is cached per bwrap path)."""
    bwrap = host_program("bwrap")
    return bwrap is not None and _probe(bwrap)


def reset_sandbox_caches() -> None:
    """Forget the probe results and the warned-once flag (for tests)."""
    _probe.cache_clear()
    _overlay_refusal.cache_clear()
    scratch.reset_said()
    hardening.namespace_args.cache_clear()
    _warned.clear()


def make_sandbox(*, require_isolation: bool) -> Sandbox:
    """BubblewrapSandbox when usable; else PlainSandbox if allowed (warning once), else raise."""
    if bubblewrap_available():
        box = BubblewrapSandbox()
        # Probed here, once per process: a server's worker forks a process per step from it.
        scratch.unavailable(_overlay_refusal(box.bwrap))
        return box
    if require_isolation and os.environ.get("STEPWISE_ALLOW_UNSANDBOXED") != "1":
        raise _unavailable("bubblewrap is unusable; server mode runs repo code only sandboxed")
    if not _warned:
        _warned.append(True)
        log.warning(
            "bubblewrap is not available: repository commands run WITHOUT isolation "
            "(scrubbed environment and timeouts only); install bubblewrap to sandbox them"
        )
    return PlainSandbox()
