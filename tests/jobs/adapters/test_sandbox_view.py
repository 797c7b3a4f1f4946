"""What a sandboxed command sees (jobs/adapters/sandbox_view.py, real bubblewrap): a scrubbed
environment and a private, empty HOME; with bubblewrap, no host loopback, only the worktree and
the writable paths writable, hidden paths invisible, a private /tmp that still shows the
programs on PATH under /tmp, and a symlinked cwd resolved."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters import sandbox_view as view
from jobs.adapters.sandbox import BubblewrapSandbox, PlainSandbox, Sandbox, SandboxPolicy
from tests.jobs.adapters.sandbox_kit import PY, needs_bwrap, py, run

pytestmark = pytest.mark.usefixtures("python_on_path")


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
def test_credential_stores_in_the_home_folder_are_hidden_and_toolchains_stay(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The home folder of the user running Stepwise: its keys and tokens are never readable by a
    # sandboxed command; a toolchain installed there still is.
    home = outside_tmp / "home"
    secrets = {".ssh/id_ed25519": "SSH KEY", ".git-credentials": "https://x:ghp_TOKEN@github.com",
               ".config/gh/hosts.yml": "oauth_token: gho_TOKEN", ".aws/credentials": "AWS KEY",
               ".docker/config.json": '{"auths": {"x": {"auth": "TOKEN"}}}'}
    for name, text in {**secrets, ".pyenv/version": "3.12.1"}.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    work = outside_tmp / "work"
    work.mkdir()
    code = ("import sys\nfor path in sys.argv[1:]:\n"
            "    try:\n        print(repr(open(path).read()))\n"
            "    except OSError as error:\n        print(type(error).__name__)\n")
    names = [*secrets, ".pyenv/version"]
    result = run(BubblewrapSandbox(), py(code, *(str(home / n) for n in names)), work)
    assert result.ok, result.output_tail
    seen = result.output_tail.splitlines()
    # A hidden folder is empty (its files are gone); a hidden file reads as empty.
    assert seen == ["FileNotFoundError", "''", "FileNotFoundError", "FileNotFoundError",
                    "FileNotFoundError", "'3.12.1'"]
    assert all(text not in result.output_tail for text in secrets.values())


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
