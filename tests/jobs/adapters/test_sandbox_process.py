"""Running a command in either sandbox (jobs/adapters/sandbox_process.py, real subprocesses):
exit codes and the merged output tail, a missing program, the timeout and the cooperative stop
killing the whole process group, and background children that hold stdout open."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest

from jobs.adapters import sandbox as sb
from jobs.adapters.sandbox import Sandbox, SandboxPolicy
from tests.jobs.adapters.sandbox_kit import PY, alive, procs_with, py, run, wait_until

pytestmark = pytest.mark.usefixtures("python_on_path")


# --- exit codes, output -------------------------------------------------------------------------


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


# --- timeouts, stops, children -----------------------------------------------------------------


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
