"""The sandboxes of jobs/adapters/sandbox.py (real subprocesses, real bubblewrap): refusing
commands off the allowlist, building the environment, choosing a sandbox (make_sandbox), the
bubblewrap command line, and how a result is summarised."""

from __future__ import annotations

import json
import logging
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
from jobs.basics.errors import RetryClass, StepwiseError
from tests.jobs.adapters.sandbox_kit import PY, needs_bwrap, py, run

pytestmark = pytest.mark.usefixtures("python_on_path")


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


# --- the environment and the bubblewrap command line ------------------------------------------


def test_build_environment_rejects_bad_names() -> None:
    with pytest.raises(StepwiseError, match="not a valid environment variable"):
        sb.build_environment(SandboxPolicy(PY, env={"A=B": "1"}), home=Path("/h"), root=Path("/r"))


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
