"""The sandbox runs real subprocesses (and real bubblewrap): allowlist, env scrubbing, kills."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters import sandbox_view as view
from jobs.adapters.sandbox import (
    BubblewrapSandbox,
    CommandRefusedError,
    CommandResult,
    PlainSandbox,
    Sandbox,
    SandboxPolicy,
)
from jobs.domain.errors import RetryClass, StepwiseError

PY = ("python", "python3")
IN_CI = os.environ.get("CI") == "true"
BWRAP_OK = sb.bubblewrap_available()
if IN_CI and not BWRAP_OK:
    raise RuntimeError("bubblewrap must be installed and usable in CI (apt-get install bubblewrap)")
needs_bwrap = pytest.mark.skipif(not BWRAP_OK, reason="bubblewrap (bwrap) is not usable here")


@pytest.fixture(autouse=True)
def _python_on_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The test venv's python3 must be what `python3` resolves to inside the command.
    here = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", here + os.pathsep + os.environ.get("PATH", os.defpath))
    sb.reset_sandbox_caches()
    yield
    sb.reset_sandbox_caches()


@pytest.fixture(params=["plain", pytest.param("bwrap", marks=needs_bwrap)])
def box(request: pytest.FixtureRequest) -> Sandbox:
    return PlainSandbox() if request.param == "plain" else BubblewrapSandbox()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    # A directory outside /tmp, so the sandbox's private /tmp does not already hide it.
    path = Path(tempfile.mkdtemp(prefix="stepwise-sandbox-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def py(code: str, *args: str) -> list[str]:
    return ["python3", "-c", code, *args]


def run(box: Sandbox, argv: list[str], cwd: Path, **kwargs: object) -> CommandResult:
    writable = kwargs.pop("writable", ())
    policy = SandboxPolicy(allow_commands=kwargs.pop("allow", PY), **kwargs)  # type: ignore[arg-type]
    return box.run(argv, cwd=cwd, policy=policy, writable=writable)  # type: ignore[arg-type]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its (re)parent to reap it is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def procs_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_until(predicate: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


# --- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "allow", "why"),
    [
        (py("open('marker', 'w')"), ("pytest",), "not on allow_commands"),
        (["rm", "-f", "keep"], ("rm", "python3"), "blocklist"),
        (["/usr/bin/python3", "-c", "open('marker', 'w')"], PY, "is a path"),
        ([], PY, "empty"),
    ],
)
def test_refused_commands_raise_and_run_nothing(
    box: Sandbox, tmp_path: Path, argv: list[str], allow: tuple[str, ...], why: str
) -> None:
    (tmp_path / "keep").write_text("still here")
    with pytest.raises(CommandRefusedError) as caught:
        run(box, argv, tmp_path, allow=allow)
    err = caught.value
    assert why in err.message
    assert err.code == "command_refused"
    assert err.retry_class is RetryClass.NEEDS_HUMAN
    assert "allow_commands" in err.hint
    assert not (tmp_path / "marker").exists()
    assert (tmp_path / "keep").read_text() == "still here"


# --- exit codes, output, timeouts -------------------------------------------------------------


def test_exit_code_and_merged_output(box: Sandbox, tmp_path: Path) -> None:
    code = "import sys; print('to out'); print('to err', file=sys.stderr); sys.exit(3)"
    result = run(box, py(code), tmp_path)
    assert result.exit_code == 3
    assert not result.ok
    assert not result.timed_out
    assert result.isolated is box.isolated
    assert "to out" in result.output_tail and "to err" in result.output_tail
    assert result.output_lines == 2
    assert result.argv == ("python3", "-c", code)
    assert "exited 3 after" in result.summary()
    json.dumps(result.evidence())


def test_success_and_stdin_is_empty(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, py("import sys; print(repr(sys.stdin.read()))"), tmp_path)
    assert result.ok
    assert result.output_tail == "''"


def test_long_output_keeps_the_tail(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, py("for i in range(5000): print('line', i)"), tmp_path)
    assert result.ok
    assert result.output_lines == 5000
    lines = result.output_tail.splitlines()
    assert len(lines) == sb.TAIL_LINES
    assert lines[0] == "line 4960" and lines[-1] == "line 4999"
    assert "5,000 lines of output, last 40 shown" in result.summary()


def test_long_lines_are_cut(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, py("for i in range(100): print(str(i) * 5000, end='')"), tmp_path)
    assert result.output_lines == 1
    assert len(result.output_tail) == sb.TAIL_LINE_CHARS
    result = run(box, py("print('x' * 300); print('\\r'.join(['progress'] * 5))"), tmp_path)
    assert result.output_lines == 2
    assert result.output_tail.splitlines()[0] == "x" * 300
    result = run(box, py("for i in range(100): print(chr(97 + i % 26) * 1000)"), tmp_path)
    assert result.output_lines == 100
    assert len(result.output_tail) <= sb.TAIL_TOTAL_CHARS
    assert result.output_tail.endswith("v" * 500)


def test_missing_program_is_exit_127(box: Sandbox, tmp_path: Path) -> None:
    result = run(box, ["no-such-program-xyz", "--help"], tmp_path, allow=("no-such-program-xyz",))
    assert result.exit_code == 127
    assert "not found" in result.output_tail


def test_timeout_kills_the_command_and_its_children(box: Sandbox, tmp_path: Path) -> None:
    token = f"stepwise-grandchild-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(100)', sys.argv[1]]\n"
        "child = subprocess.Popen(sleeper)\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "time.sleep(100)\n"
    )
    started = time.monotonic()
    # 3 s: time for the grandchild to start even on a loaded machine, before the kill
    result = run(box, py(code, token), tmp_path, timeout=3.0)
    assert time.monotonic() - started < 10
    assert result.timed_out and not result.ok
    assert result.exit_code < 0
    assert "timed out after" in result.summary()
    assert (tmp_path / "child.pid").exists()
    assert wait_until(lambda: not procs_with(token)), procs_with(token)
    if not box.isolated:  # inside bwrap the pid belongs to another pid namespace
        assert not alive(int((tmp_path / "child.pid").read_text()))


def test_background_child_holding_stdout_does_not_hang(box: Sandbox, tmp_path: Path) -> None:
    token = f"stepwise-bg-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(100)', sys.argv[1]])\n"
        "print('parent done')\n"
    )
    started = time.monotonic()
    result = run(box, py(code, token), tmp_path, timeout=30.0)
    assert time.monotonic() - started < 5
    assert result.ok and result.output_tail == "parent done"
    assert wait_until(lambda: not procs_with(token)), "the background child outlived the command"


# --- environment ------------------------------------------------------------------------------


def test_environment_is_scrubbed(
    box: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("STEPWISE_WEBHOOK_SECRET", "hush")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    code = "import json, os; json.dump(dict(os.environ), open('env.json', 'w'))"
    result = run(box, py(code), tmp_path, env={"PYTHONPATH": "src", "CI": "false"})
    assert result.ok, result.output_tail
    seen = json.loads((tmp_path / "env.json").read_text())
    extra = {"PWD"} if box.isolated else set()  # bwrap sets PWD after --chdir
    trust = view.trust_environment()  # the trust store's paths, e.g. SSL_CERT_FILE
    assert set(seen) == {"PATH", "HOME", *sb.BASE_ENV, "PYTHONPATH", *extra, *trust}
    assert all(seen[name] == value for name, value in trust.items())
    assert seen["PYTHONPATH"] == "src" and seen["CI"] == "false"
    root = view.REPO_MOUNT if box.isolated else tmp_path
    assert seen["PATH"] == view.program_path(os.environ["PATH"], root)
    assert seen["HOME"] != os.path.expanduser("~")
    assert "ghs_secret" not in json.dumps(seen)


def test_home_is_private_and_empty(box: Sandbox, tmp_path: Path) -> None:
    code = "import os; h = os.environ['HOME']; print(len(os.listdir(h))); open(h + '/x', 'w')"
    result = run(box, py(code), tmp_path)
    assert result.ok, result.output_tail
    assert result.output_tail == "0"


def test_build_environment_rejects_bad_names() -> None:
    with pytest.raises(StepwiseError, match="not a valid environment variable"):
        sb.build_environment(SandboxPolicy(PY, env={"A=B": "1"}), home=Path("/h"), root=Path("/r"))


# --- bubblewrap isolation ---------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        yield server.getsockname()[1]


@needs_bwrap
def test_the_host_loopback_is_out_of_reach_with_or_without_network(
        tmp_path: Path, listener: int) -> None:
    code = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3)"
    closed = run(BubblewrapSandbox(), py(code, str(listener)), tmp_path)
    assert closed.exit_code == 1 and "ConnectionRefusedError" in closed.output_tail
    # `network` means the egress proxy, never the host's network namespace.
    opened = run(BubblewrapSandbox(), py(code, str(listener)), tmp_path, network=True)
    assert opened.exit_code == 1 and "ConnectionRefusedError" in opened.output_tail
    assert run(PlainSandbox(), py(code, str(listener)), tmp_path).ok


@needs_bwrap
def test_only_cwd_and_writable_paths_are_writable(tmp_path: Path, outside_tmp: Path) -> None:
    extra = outside_tmp / "extra"
    extra.mkdir()
    code = "import sys; open(sys.argv[1], 'w').write('x')"
    box = BubblewrapSandbox()
    assert run(box, py(code, "inside.txt"), tmp_path).ok
    assert (tmp_path / "inside.txt").read_text() == "x"
    refused = run(box, py(code, str(outside_tmp / "outside.txt")), tmp_path)
    assert refused.exit_code == 1 and "Read-only file system" in refused.output_tail
    assert not (outside_tmp / "outside.txt").exists()
    assert run(box, py(code, str(extra / "w.txt")), tmp_path, writable=[extra]).ok
    assert (extra / "w.txt").read_text() == "x"


@needs_bwrap
def test_hidden_paths_are_invisible_but_writable_paths_inside_come_back(
    tmp_path: Path, outside_tmp: Path
) -> None:
    state = outside_tmp / "state"
    (state / "jobs" / "other").mkdir(parents=True)
    (state / "jobs" / "other" / "secret.txt").write_text("other job's data")
    (state / "app.pem").write_text("PRIVATE KEY")
    work = state / "jobs" / "mine"
    work.mkdir()
    key_file = outside_tmp / "key.pem"
    key_file.write_text("ANOTHER KEY")
    code = (
        "import os, sys\n"
        "print(sorted(os.listdir(sys.argv[1])))\n"
        "print(repr(open(sys.argv[2]).read()))\n"
        "open('made.txt', 'w').write('ok')\n"
        "print(os.path.exists(sys.argv[3]))\n"
    )
    argv = py(code, str(state), str(key_file), str(state / "app.pem"))
    policy = SandboxPolicy(PY, hidden_paths=(state, key_file, outside_tmp / "missing"))
    result = BubblewrapSandbox().run(argv, cwd=work, policy=policy)
    assert result.ok, result.output_tail
    # The worktree is seen only at the fixed repository path, never at its place in the state.
    assert result.output_tail.splitlines() == ["[]", "''", "False"]
    assert (work / "made.txt").read_text() == "ok"


@needs_bwrap
def test_tmp_is_private(tmp_path: Path) -> None:
    inside = Path(f"/tmp/stepwise-inside-{uuid.uuid4().hex}")
    host = Path(f"/tmp/stepwise-host-{uuid.uuid4().hex}")
    host.write_text("host only")
    try:
        code = "import os, sys; open(sys.argv[1], 'w'); print(os.path.exists(sys.argv[2]))"
        result = run(BubblewrapSandbox(), py(code, str(inside), str(host)), tmp_path)
    finally:
        host.unlink()
    assert result.ok, result.output_tail
    assert result.output_tail == "False"
    assert not inside.exists()


@needs_bwrap
def test_symlinked_cwd_is_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    result = run(BubblewrapSandbox(), py("open('f', 'w').write('1')"), tmp_path / "link")
    assert result.ok, result.output_tail
    assert (real / "f").exists()


# --- make_sandbox -----------------------------------------------------------------------------


def hide_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))
    sb.reset_sandbox_caches()


@needs_bwrap
def test_make_sandbox_prefers_bubblewrap() -> None:
    assert isinstance(sb.make_sandbox(require_isolation=True), BubblewrapSandbox)
    assert sb.bubblewrap_available()


def test_make_sandbox_refuses_without_isolation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hide_bwrap(monkeypatch, tmp_path)
    monkeypatch.delenv("STEPWISE_ALLOW_UNSANDBOXED", raising=False)
    assert not sb.bubblewrap_available()
    with pytest.raises(StepwiseError) as caught:
        sb.make_sandbox(require_isolation=True)
    assert caught.value.code == "sandbox_unavailable"
    assert caught.value.retry_class is RetryClass.DO_NOT_RETRY
    assert "STEPWISE_ALLOW_UNSANDBOXED=1" in caught.value.hint
    monkeypatch.setenv("STEPWISE_ALLOW_UNSANDBOXED", "1")
    assert isinstance(sb.make_sandbox(require_isolation=True), PlainSandbox)


def test_make_sandbox_local_mode_warns_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hide_bwrap(monkeypatch, tmp_path)
    with caplog.at_level(logging.WARNING, logger="jobs.adapters.sandbox"):
        first = sb.make_sandbox(require_isolation=False)
        second = sb.make_sandbox(require_isolation=False)
    assert isinstance(first, PlainSandbox) and isinstance(second, PlainSandbox)
    assert not first.isolated
    assert len([r for r in caplog.records if "WITHOUT isolation" in r.message]) == 1


def test_a_bwrap_that_cannot_build_a_sandbox_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create a namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    sb.reset_sandbox_caches()
    assert not sb.bubblewrap_available()
    assert isinstance(sb.make_sandbox(require_isolation=False), PlainSandbox)


# --- results ----------------------------------------------------------------------------------


def test_summary_and_evidence() -> None:
    result = CommandResult(("python", "-m", "pytest", "-q"), 1, 2.34, "boom", 1234, False, True)
    assert result.summary() == (
        "`python -m pytest -q` exited 1 after 2.3 s (1,234 lines of output, last 1 shown)"
    )
    empty = CommandResult(("ruff", "check", "."), 0, 0.5, "", 0, False, False)
    assert empty.ok and empty.summary() == "`ruff check .` exited 0 after 0.5 s (no output)"
    evidence = result.evidence()
    assert json.loads(json.dumps(evidence)) == evidence
    assert evidence["argv"] == ["python", "-m", "pytest", "-q"] and evidence["isolated"] is True


def test_bubblewrap_command_orders_hidden_before_binds(tmp_path: Path) -> None:
    hidden, cwd = tmp_path / "hidden", tmp_path / "hidden" / "work"
    cwd.mkdir(parents=True)
    policy = SandboxPolicy(PY, network=True, hidden_paths=(hidden,))
    cmd = BubblewrapSandbox("/usr/bin/bwrap").command(
        ["python3", "-V"], cwd=cwd, policy=policy, env={"A": "1"}
    )
    assert cmd[0] == "/usr/bin/bwrap" and cmd[-3:] == ["--", "python3", "-V"]
    assert "--share-net" not in cmd and "--unshare-all" in cmd and "--clearenv" in cmd
    tmpfs_hidden = cmd.index(str(hidden.resolve()))
    bind_cwd = cmd.index("--bind")
    assert cmd[tmpfs_hidden - 1] == "--tmpfs" and tmpfs_hidden < bind_cwd
    assert cmd[bind_cwd + 1 : bind_cwd + 3] == [str(cwd.resolve()), str(view.REPO_MOUNT)]


def test_programs_on_path_under_tmp_stay_visible_in_the_private_tmp(
    box: Sandbox, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tool installed under /tmp (a virtualenv there, say) still runs in the sandbox.
    with tempfile.TemporaryDirectory(prefix="stepwise-tools-", dir="/tmp") as tools:
        bin_dir = Path(tools) / "bin"
        bin_dir.mkdir()
        (Path(tools) / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (Path(tools) / "lib" / "data.txt").parent.mkdir()
        (Path(tools) / "lib" / "data.txt").write_text("from the venv\n")
        tool = bin_dir / "hello-tool"
        tool.write_text(f"#!/bin/sh\ncat {tools}/lib/data.txt\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        result = run(box, ["hello-tool"], outside_tmp, allow=("hello-tool",))
    assert result.ok, result.output_tail
    assert result.output_tail == "from the venv"


def test_should_stop_ends_a_running_command_and_its_group(box: Sandbox, tmp_path: Path) -> None:
    token = f"stop-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(100)', sys.argv[1]])\n"
        "time.sleep(100)\n"
    )
    asked = time.monotonic() + 1.0
    policy = SandboxPolicy(allow_commands=PY, timeout=60,
                           should_stop=lambda: time.monotonic() > asked)
    started = time.monotonic()
    result = box.run(py(code, token), cwd=tmp_path, policy=policy)
    assert result.cancelled and not result.ok and not result.timed_out
    assert time.monotonic() - started < 5
    assert wait_until(lambda: not procs_with(token)), "a child outlived the cancelled command"
