"""The sandbox's view of what the configured commands need (jobs/adapters/sandbox_reach.py, real
bubblewrap): tools in a PATH folder under the system temp directory whose entries are links
(`node_modules/.bin/tape` -> `../tape/bin/tape`), a PATH folder reached through a link, a
script's interpreter, the paths `env` names; refusals that name the place and the rule; and a
repository's links, which never widen what the sandbox shows."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.adapters.sandbox import BubblewrapSandbox, CommandResult, SandboxPolicy
from tests.jobs.adapters.sandbox_kit import PY, needs_bwrap, node_tools, py

pytestmark = [needs_bwrap, pytest.mark.usefixtures("python_on_path")]


@pytest.fixture
def in_tmp() -> Iterator[Path]:
    """A folder under the system temp directory, which the sandbox's private /tmp hides."""
    path = Path(tempfile.mkdtemp(prefix="stepwise-reach-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def on_path(monkeypatch: pytest.MonkeyPatch, folder: Path | str) -> None:
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def run_tool(tool: str, outside_tmp: Path) -> CommandResult:
    """Run `tool` in bubblewrap from a worktree of its own under `outside_tmp`."""
    work = outside_tmp / "work"
    work.mkdir(exist_ok=True)
    return BubblewrapSandbox().run([tool], cwd=work, policy=SandboxPolicy(allow_commands=(tool,)))


def test_linked_tools_in_a_path_folder_under_the_temp_directory_run(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path(monkeypatch, node_tools(in_tmp))
    result = run_tool("tape", outside_tmp)
    assert result.ok, result.output_tail
    assert result.output_tail == "dependency read"


def test_a_path_folder_reached_through_a_link_is_shown_where_path_names_it(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # PATH names /tmp/…/tools/node_modules/.bin; the tools really live outside /tmp.
    real = outside_tmp / "real-tools"
    node_tools(real)
    (in_tmp / "tools").symlink_to(real)
    on_path(monkeypatch, in_tmp / "tools" / "node_modules" / ".bin")
    result = run_tool("tape", outside_tmp)
    assert result.ok, result.output_tail
    assert result.output_tail == "dependency read"


def test_a_link_from_a_visible_path_folder_into_the_temp_directory_is_followed(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node_tools(in_tmp)
    shelf = outside_tmp / "bin"
    shelf.mkdir()
    (shelf / "tape").symlink_to(in_tmp / "node_modules" / "tape" / "bin" / "tape")
    on_path(monkeypatch, shelf)
    result = run_tool("tape", outside_tmp)
    assert result.ok, result.output_tail
    assert result.output_tail == "dependency read"


def test_a_scripts_interpreter_under_the_temp_directory_is_shown(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (in_tmp / "interp").mkdir()
    shutil.copy("/bin/sh", in_tmp / "interp" / "sh")
    shelf = outside_tmp / "bin"
    shelf.mkdir()
    (shelf / "greet").write_text(f"#!{in_tmp}/interp/sh\necho greeted\n")
    (shelf / "greet").chmod(0o755)
    on_path(monkeypatch, shelf)
    result = run_tool("greet", outside_tmp)
    assert result.ok, result.output_tail
    assert result.output_tail == "greeted"


def test_a_path_named_in_env_under_the_temp_directory_is_shown_read_only(
        in_tmp: Path, outside_tmp: Path) -> None:
    (in_tmp / "data.txt").write_text("from env\n")
    code = ("import os, sys; d = os.environ['DATA_DIR']; print(open(d + '/data.txt').read())\n"
            "try:\n    open(d + '/new.txt', 'w')\nexcept OSError as e:\n    print(e.strerror)")
    policy = SandboxPolicy(PY, env={"DATA_DIR": str(in_tmp), "PYTHONPATH": f"src:{in_tmp}"})
    result = BubblewrapSandbox().run(py(code), cwd=outside_tmp, policy=policy)
    assert result.ok, result.output_tail
    assert result.output_tail.splitlines() == ["from env", "", "Read-only file system"]


def test_env_naming_the_temp_directory_itself_or_a_hidden_path_is_refused_before_running(
        outside_tmp: Path) -> None:
    state = outside_tmp / "state"
    state.mkdir()
    box = BubblewrapSandbox()
    whole = box.run(py("print(1)"), cwd=outside_tmp,
                    policy=SandboxPolicy(PY, env={"SCRATCH": "/tmp"}))
    assert whole.exit_code == 127
    assert whole.output_tail == (
        "`env` SCRATCH names /tmp, which the sandbox cannot show: /tmp itself is never shown "
        "(the sandbox's /tmp is a private, empty one); name a folder of its own under it instead")
    hidden = box.run(py("print(1)"), cwd=outside_tmp,
                     policy=SandboxPolicy(PY, env={"KEYS": str(state)}, hidden_paths=(state,)))
    assert hidden.exit_code == 127
    assert hidden.output_tail == (
        f"`env` KEYS names {state}, which the sandbox cannot show: it is inside {state}, and "
        "Stepwise hides it from sandboxed commands (its state, the clones, the App key); "
        "name a place outside it instead")


def test_a_tool_inside_a_hidden_path_is_refused_naming_where_it_resolved(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = node_tools(in_tmp)
    on_path(monkeypatch, bin_dir)
    policy = SandboxPolicy(allow_commands=("tape",), hidden_paths=(in_tmp,))
    result = BubblewrapSandbox().run(["tape"], cwd=outside_tmp, policy=policy)
    assert result.exit_code == 127
    assert result.output_tail == (
        f"`tape` resolves outside the sandbox to {bin_dir}/tape (a link to "
        f"{in_tmp}/node_modules/tape/bin/tape), which the sandbox does not show: it is inside "
        f"{in_tmp}, and Stepwise hides it from sandboxed commands (its state, the clones, the "
        "App key); install the tool outside it")


def test_a_relative_path_entry_is_named_instead_of_a_raw_execvp_error(
        outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Found where Stepwise runs, but the sandbox reads `tools` in the repository's folder.
    (outside_tmp / "tools").mkdir()
    (outside_tmp / "tools" / "lint").write_text("#!/bin/sh\necho linted\n")
    (outside_tmp / "tools" / "lint").chmod(0o755)
    monkeypatch.chdir(outside_tmp)
    on_path(monkeypatch, "tools")
    result = run_tool("lint", outside_tmp)
    assert result.exit_code == 127
    assert result.output_tail == (
        f"`lint` resolves outside the sandbox to {outside_tmp}/tools/lint, through the "
        "relative PATH entry `tools`, which the sandbox reads from the repository's folder "
        "instead: put the absolute folder on PATH")
    assert "bwrap: execvp" not in result.output_tail


def test_a_repositorys_links_never_widen_the_view(
        in_tmp: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host secret under /tmp, and a hostile checkout linking to it from a PATH folder and
    # from a path `env` names: neither link is followed, nothing of the secret is bound.
    secret = in_tmp / "secret"
    secret.mkdir()
    (secret / "key").write_text("host secret\n")
    (secret / "peek").write_text("#!/bin/sh\ncat key\n")
    (secret / "peek").chmod(0o755)
    checkout = outside_tmp / "checkout"
    (checkout / "bin").mkdir(parents=True)
    (checkout / "bin" / "peek").symlink_to(secret / "peek")
    (checkout / "vendor").symlink_to(secret)
    (checkout / "ssh").symlink_to(Path.home() / ".ssh")
    on_path(monkeypatch, checkout / "bin")
    work = outside_tmp / "work"
    work.mkdir()
    box = BubblewrapSandbox()
    env = {"VENDOR": str(checkout / "vendor"), "KEYS": str(checkout / "ssh")}
    policy = SandboxPolicy(allow_commands=("peek", *PY), env=env, repository_paths=(checkout,))
    cmd = box.command(["peek"], cwd=work, policy=policy, env={"PATH": os.environ["PATH"], **env})
    assert str(secret) not in " ".join(cmd)
    # ~/.ssh is never bound into the view (it is only ever mounted over, hidden).
    ssh = str(Path.home() / ".ssh")
    assert all(cmd[i + 1] != ssh for i, arg in enumerate(cmd[:-1]) if arg in ("--ro-bind", "--bind"))
    assert [cmd[i - 1] for i, arg in enumerate(cmd) if arg == ssh] in ([], ["--tmpfs"])
    refused = box.run(["peek"], cwd=work, policy=policy)
    assert refused.exit_code == 127
    assert refused.output_tail == (
        f"`peek` is {checkout}/bin/peek, a link to {secret}/peek, which the sandbox does not "
        "show: the sandbox's /tmp is a private, empty one, and a link in the repository is "
        "never followed to show more of the machine (nothing a repository contains widens "
        "what the sandbox shows)")
    code = "import os; print(os.path.exists(os.environ['VENDOR'] + '/key'))"
    looked = box.run(py(code), cwd=work, policy=policy)
    assert looked.ok, looked.output_tail
    assert looked.output_tail == "False"
